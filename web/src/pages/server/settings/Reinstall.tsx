import { useState } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { useInstall } from '../../../hooks/useInstall';
import { useTemplate } from '../../../hooks/useTemplates';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

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
        <div className={styles.confirm} role="group" aria-label="Reinstall the server?">
          <p>Run the install script again now?</p>
          <div className={styles.buttons}>
            <button
              type="button"
              className={`button ${styles.danger}`}
              disabled={install.isPending}
              onClick={() => {
                install.mutate(undefined, {
                  onSuccess: () => {
                    setConfirming(false);
                    setStarted(true);
                  },
                });
              }}
            >
              {install.isPending ? 'Starting the install…' : 'Reinstall now'}
            </button>
            <button
              type="button"
              className="button secondary"
              disabled={install.isPending}
              onClick={() => {
                setConfirming(false);
                install.reset();
              }}
            >
              Cancel
            </button>
          </div>
        </div>
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
