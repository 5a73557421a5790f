import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useInstall } from '../../../hooks/useInstall';
import { useTemplate } from '../../../hooks/useTemplates';
import page from '../../Page.module.css';
import { Confirm } from '../../../components/Confirm';

/**
 * For a server whose template has an install script: runs it again, after a confirmation (it
 * works in the server's folder and may overwrite files there). Nothing when there is no script.
 */
export function Reinstall({ server, template }: { server: string; template: string }) {
  const details = useTemplate(template);
  const install = useInstall(server);
  const [confirming, setConfirming] = useState(false);
  const [started, setStarted] = useState(false);
  if (details.data?.install == null) return null;
  return (
    <section className={page.card} aria-labelledby="reinstall-title">
      <h2 id="reinstall-title">Reinstall</h2>
      <p>
        Runs the install script of the template {details.data.name} again in the server&apos;s
        folder; it may overwrite the files it installs. The server must be stopped; the
        script&apos;s output is in the console.
      </p>
      {started && <Alert tone="success">Installing: the output is in the console</Alert>}
      {install.isError && <Alert tone="error">{errorMessage(install.error)}</Alert>}
      {confirming ? (
        <Confirm
          label="Reinstall the server?"
          action="Reinstall now"
          pendingAction="Starting the install…"
          pending={install.isPending}
          onConfirm={() => {
            install.mutate(undefined, {
              onSuccess: () => {
                setConfirming(false);
                setStarted(true);
              },
            });
          }}
          onCancel={() => {
            setConfirming(false);
            install.reset();
          }}
        >
          Run the install script again now?
        </Confirm>
      ) : (
        <div>
          <button
            type="button"
            className="button secondary"
            onClick={() => {
              install.reset();
              setStarted(false);
              setConfirming(true);
            }}
          >
            Reinstall
          </button>
        </div>
      )}
    </section>
  );
}
