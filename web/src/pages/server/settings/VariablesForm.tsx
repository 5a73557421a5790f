import { useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field } from '../../../components/Field';
import {
  useServerVariables,
  useUpdateVariables,
  type ServerVariable,
} from '../../../hooks/useServerVariables';
import page from '../../Page.module.css';
import styles from './Settings.module.css';

/**
 * A template server's variables: one field each, read-only when the caller may not change it.
 * Save sends only the values that changed; the API checks each against its rules and names the
 * variable it refuses.
 */
export function VariablesForm({ server }: { server: string }) {
  const variables = useServerVariables(server);
  return (
    <section className={page.card} aria-labelledby="variables-title">
      <h2 id="variables-title">Variables</h2>
      {variables.isError ? (
        <Alert tone="error">{errorMessage(variables.error)}</Alert>
      ) : variables.data === undefined ? (
        <p className={page.muted} role="status">
          Loading the variables…
        </p>
      ) : variables.data.length === 0 ? (
        <p className={page.muted}>This server&apos;s template has no variables you can see.</p>
      ) : (
        <Editor server={server} variables={variables.data} />
      )}
    </section>
  );
}

function Editor({ server, variables }: { server: string; variables: readonly ServerVariable[] }) {
  const save = useUpdateVariables(server);
  const [values, setValues] = useState<Readonly<Record<string, string>>>({});
  const [saved, setSaved] = useState(false);
  const valueOf = (variable: ServerVariable) => values[variable.envVariable] ?? variable.value;
  const changes = Object.fromEntries(
    variables
      .filter((variable) => variable.editable && valueOf(variable) !== variable.value)
      .map((variable) => [variable.envVariable, valueOf(variable)]),
  );
  const dirty = Object.keys(changes).length > 0;

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setSaved(false);
    if (!dirty) return;
    save.mutate(changes, {
      onSuccess: () => {
        setValues({});
        setSaved(true);
      },
    });
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate>
      <p className={page.muted}>Changes apply the next time the server starts.</p>
      {variables.map((variable) => (
        <Field
          key={variable.envVariable}
          label={variable.name}
          name={variable.envVariable}
          spellCheck={false}
          autoCapitalize="none"
          readOnly={!variable.editable}
          hint={[
            variable.description,
            variable.envVariable,
            variable.editable ? '' : 'Only an admin can change it',
          ]
            .filter((part) => part !== '')
            .join(' · ')}
          value={valueOf(variable)}
          onChange={(event) => {
            const value = event.target.value;
            setSaved(false);
            setValues((current) => ({ ...current, [variable.envVariable]: value }));
          }}
        />
      ))}
      <div className={styles.actions}>
        {save.isError && <Alert tone="error">{errorMessage(save.error)}</Alert>}
        {saved && <Alert tone="success">Variables saved</Alert>}
        <div className={styles.buttons}>
          <button type="submit" className="button primary" disabled={!dirty || save.isPending}>
            {save.isPending ? 'Saving…' : 'Save variables'}
          </button>
          <button
            type="button"
            className="button secondary"
            disabled={!dirty || save.isPending}
            onClick={() => {
              setValues({});
              save.reset();
            }}
          >
            Discard changes
          </button>
        </div>
      </div>
    </form>
  );
}
