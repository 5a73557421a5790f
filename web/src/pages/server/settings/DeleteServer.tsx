import { useState, type SyntheticEvent } from 'react';
import { useNavigate } from 'react-router';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import { FormButtons } from '../../../components/FormButtons';
import { useDeleteServer } from '../../../hooks/useServerSettings';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

/**
 * Admins only: deletes the server and its folder. Nothing can bring them back, so the server's
 * name must be typed first, as a person who means it would.
 */
export function DeleteServer({ server, displayName }: { server: string; displayName: string }) {
  const remove = useDeleteServer(server);
  const navigate = useNavigate();
  const [confirming, setConfirming] = useState(false);
  const [typed, setTyped] = useState('');

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (typed !== server) return;
    remove.mutate(undefined, {
      onSuccess: () => {
        void navigate('/servers', { replace: true });
      },
    });
  };

  return (
    <section className={`${page.card} ${styles.dangerZone}`} aria-labelledby="delete-title">
      <h2 id="delete-title">Delete server</h2>
      <p>
        Stops {displayName} and deletes it with its folder: the world, its configuration files and
        everything else in it. This cannot be undone.
      </p>
      {confirming ? (
        <form className={styles.confirm} onSubmit={submit}>
          <Field
            label={`Type ${server} to confirm`}
            name="confirmName"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            value={typed}
            onChange={(event) => {
              setTyped(event.target.value);
            }}
          />
          {remove.isError && <Alert tone="error">{errorMessage(remove.error)}</Alert>}
          {remove.isPending && <Alert tone="info">Stopping and deleting…</Alert>}
          <FormButtons
            submit="Delete server"
            submitClassName={`button ${styles.danger}`}
            disabled={typed !== server}
            pending={remove.isPending}
            onCancel={() => {
              setConfirming(false);
              setTyped('');
              remove.reset();
            }}
            lockCancel
          />
        </form>
      ) : (
        <div>
          <button
            type="button"
            className={`button ${styles.danger}`}
            onClick={() => {
              setConfirming(true);
            }}
          >
            Delete server
          </button>
        </div>
      )}
    </section>
  );
}
