/**
 * The game asks for the Minecraft EULA (its `eula` feature's notice, docs/templates.md): a dialog
 * asks whoever may accept it (`files.write` and `power`) to do so; the panel then writes eula.txt
 * and starts the server. Dismissed, it leaves a line above the console to open it again; without
 * the rights, only that line, saying who can.
 */
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { useAcceptEula } from '../../hooks/useServerFeatures';
import styles from './EulaPrompt.module.css';

/** Where Minecraft's EULA is (the link its own eula.txt gives). */
export const MINECRAFT_EULA_URL = 'https://aka.ms/MinecraftEULA';

export function EulaPrompt({
  server,
  canAccept,
  onAccepted,
}: {
  server: string;
  /** Holds `files.write` and `power` on the server. */
  canAccept: boolean;
  /** The EULA was accepted and the server asked to start. */
  onAccepted: () => void;
}) {
  const [asking, setAsking] = useState(canAccept);
  const accept = useAcceptEula(server);
  if (!canAccept) {
    return (
      <Alert tone="info">
        The game runs only once the{' '}
        <a href={MINECRAFT_EULA_URL} target="_blank" rel="noreferrer noopener">
          Minecraft EULA
        </a>{' '}
        is accepted. Someone with the files.write and power permissions on this server can accept it
        here.
      </Alert>
    );
  }
  return (
    <>
      <div className={styles.waiting}>
        <Alert tone="info">The game runs only once the Minecraft EULA is accepted.</Alert>
        <button
          type="button"
          className="button secondary"
          onClick={() => {
            accept.reset();
            setAsking(true);
          }}
        >
          Review the EULA
        </button>
      </div>
      {asking && (
        <EulaDialog
          pending={accept.isPending}
          error={accept.isError ? accept.error : null}
          onAccept={() => {
            accept.mutate(undefined, {
              onSuccess: () => {
                setAsking(false);
                onAccepted();
              },
            });
          }}
          onDismiss={() => {
            setAsking(false);
          }}
        />
      )}
    </>
  );
}

/** The question itself, modal; Escape and "Not now" (which has the focus) close it. */
function EulaDialog({
  pending,
  error,
  onAccept,
  onDismiss,
}: {
  pending: boolean;
  error: unknown;
  onAccept: () => void;
  onDismiss: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const notNow = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    const element = dialog.current;
    element?.showModal();
    // The safe answer has the focus (showModal gives it to the first link otherwise): a stray
    // Enter never accepts an agreement.
    notNow.current?.focus();
    return () => {
      element?.close();
    };
  }, []);
  return (
    <dialog
      ref={dialog}
      className={styles.dialog}
      aria-labelledby="eula-title"
      aria-describedby="eula-text"
      onCancel={(event) => {
        event.preventDefault();
        if (!pending) onDismiss();
      }}
    >
      <h2 id="eula-title">Accept the Minecraft EULA?</h2>
      <p id="eula-text">
        This server runs Minecraft, which starts only once its end user licence agreement is
        accepted. By choosing “I accept” you agree to the{' '}
        <a href={MINECRAFT_EULA_URL} target="_blank" rel="noreferrer noopener">
          Minecraft EULA (opens in a new tab)
        </a>
        ; the panel then writes <code>eula=true</code> into <code>eula.txt</code> and starts the
        server.
      </p>
      {error !== null && <Alert tone="error">{errorMessage(error)}</Alert>}
      <div className={styles.buttons}>
        <button type="button" className="button primary" disabled={pending} onClick={onAccept}>
          {pending ? 'Accepting…' : 'I accept'}
        </button>
        <button
          ref={notNow}
          type="button"
          className="button secondary"
          disabled={pending}
          onClick={onDismiss}
        >
          Not now
        </button>
      </div>
    </dialog>
  );
}
