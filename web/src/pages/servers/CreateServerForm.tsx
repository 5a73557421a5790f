import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import { Field } from '../../components/Field';
import { useCreateServer } from '../../hooks/useServers';
import page from '../Page.module.css';
import { EMPTY_FORM, newServerFrom, type NewServerForm } from './newServer';
import styles from './ServersPage.module.css';

/** Admins only: a new server from its name and start command (display name, stop command optional). */
export function CreateServerForm() {
  const create = useCreateServer();
  const [form, setForm] = useState(EMPTY_FORM);
  const [created, setCreated] = useState<string | null>(null);
  const set = (key: keyof NewServerForm) => (event: { target: { value: string } }) => {
    setForm((current) => ({ ...current, [key]: event.target.value }));
  };
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setCreated(null);
    create.mutate(newServerFrom(form), {
      onSuccess: (server) => {
        setCreated(server.name);
        setForm(EMPTY_FORM);
      },
    });
  };

  return (
    <section className={page.card} aria-labelledby="create-server-title">
      <h2 id="create-server-title">Create server</h2>
      <form className={styles.form} onSubmit={submit}>
        <Field
          label="Name"
          name="name"
          required
          autoCapitalize="none"
          spellCheck={false}
          hint="Letters, digits, _ . - (at most 64); it names the server's folder and cannot change"
          value={form.name}
          onChange={set('name')}
        />
        <Field
          label="Display name"
          name="displayName"
          hint="Optional"
          value={form.displayName}
          onChange={set('displayName')}
        />
        <Field
          label="Start command"
          name="startCommand"
          required
          spellCheck={false}
          hint="Run without a shell in the server's folder, e.g. java -Xmx2G -jar server.jar nogui"
          value={form.startCommand}
          onChange={set('startCommand')}
        />
        <Field
          label="Stop command"
          name="stopCommand"
          spellCheck={false}
          hint="Optional: a console line that stops the server, e.g. stop"
          value={form.stopCommand}
          onChange={set('stopCommand')}
        />
        <div className={styles.actions}>
          {create.isError && <Alert tone="error">{errorMessage(create.error)}</Alert>}
          {created !== null && <Alert tone="success">Created {created}</Alert>}
          <div>
            <button type="submit" className="button primary" disabled={create.isPending}>
              Create server
            </button>
          </div>
        </div>
      </form>
    </section>
  );
}
