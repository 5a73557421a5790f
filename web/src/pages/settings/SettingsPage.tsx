import { useId, useState, type SyntheticEvent } from 'react';
import { errorMessage } from '../../api/errors';
import { Alert } from '../../components/Alert';
import cards from '../../components/Cards.module.css';
import { Field, Unit } from '../../components/Field';
import { useMe } from '../../hooks/useMe';
import { useSession } from '../../hooks/useSession';
import { usePanelSettings, useSaveSettings } from '../../hooks/useSettings';
import { useTitle } from '../../hooks/useTitle';
import page from '../Page.module.css';
import { bodyFrom, formFrom, type FieldName, type SettingsForm } from './model';
import { Registries } from './Registries';
import styles from './Settings.module.css';

/**
 * The panel's settings (admins): the limits new servers get, the backup limits of servers that
 * set none, whether registration is open after the first account, and the container registries
 * images are pulled from (docs/web.md, Settings).
 */
export function SettingsPage() {
  useTitle('Settings');
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';
  const settings = usePanelSettings(isAdmin);
  const save = useSaveSettings();
  // Null until edited: the saved settings are shown as they are.
  const [edited, setForm] = useState<SettingsForm | null>(null);
  const [errors, setErrors] = useState<Partial<Record<FieldName, string>>>({});
  const [saved, setSaved] = useState(false);
  const registrationId = useId();

  const form = edited ?? (settings.data === undefined ? null : formFrom(settings.data));

  const change = (name: keyof SettingsForm, value: string | boolean) => {
    setSaved(false);
    if (form !== null) setForm({ ...form, [name]: value });
    setErrors((current) => ({ ...current, [name]: undefined }));
  };

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    if (form === null) return;
    const outcome = bodyFrom(form);
    if ('errors' in outcome) {
      setErrors(outcome.errors);
      return;
    }
    setErrors({});
    save.mutate(outcome.body, {
      onSuccess: (data) => {
        setForm(formFrom(data));
        setSaved(true);
      },
    });
  };

  const field = (name: FieldName, label: string, hint: string, unit?: string) => (
    <Field
      label={label}
      hint={hint}
      inputMode="decimal"
      value={form?.[name] ?? ''}
      error={errors[name]}
      onChange={(event) => {
        change(name, event.target.value);
      }}
      {...(unit === undefined ? {} : { after: <Unit label={`${label} unit`} value={unit} /> })}
    />
  );

  if (!isAdmin) {
    return (
      <>
        <div className={page.pageHeader}>
          <h1>Settings</h1>
        </div>
        <Alert tone="info">Only an administrator can change the panel&apos;s settings.</Alert>
      </>
    );
  }

  const env = settings.data?.registrationEnv ?? null;
  return (
    <>
      <div className={page.pageHeader}>
        <h1>Settings</h1>
      </div>
      {settings.isPending || form === null ? (
        settings.isError ? (
          <Alert tone="error">{errorMessage(settings.error)}</Alert>
        ) : (
          <p className={page.placeholder} role="status">
            Loading settings…
          </p>
        )
      ) : (
        <form className={styles.form} onSubmit={submit} aria-label="Panel settings" noValidate>
          <section className={page.card} aria-labelledby="server-defaults-title">
            <h2 id="server-defaults-title">New servers</h2>
            <p className={page.muted}>
              What a server gets when its creator leaves a limit out. Every server has a process
              limit; the others are optional (empty: none).
            </p>
            <div className={styles.fields}>
              {field('pids', 'Process limit', 'Processes and threads; stops a fork bomb')}
              {field('memoryMiB', 'Memory', 'Empty: no memory limit', 'MiB')}
              {field('cpuPercent', 'CPU', '100 is one core; empty: no limit', '%')}
              {field('diskMiB', 'Disk quota', 'Empty: no disk quota', 'MiB')}
            </div>
          </section>
          <section className={page.card} aria-labelledby="backup-defaults-title">
            <h2 id="backup-defaults-title">Backups</h2>
            <p className={page.muted}>
              For servers whose own backup settings set no limit. Past either, a new backup is
              refused; none is deleted to make room.
            </p>
            <div className={styles.fields}>
              {field('backupCount', 'Backups per server', 'At most this many backups')}
              {field(
                'backupMiB',
                'Backup quota',
                "Empty: the server's disk quota (none: no limit)",
                'MiB',
              )}
            </div>
          </section>
          <section className={page.card} aria-labelledby="registration-title">
            <h2 id="registration-title">Registration</h2>
            {env !== null && (
              <Alert tone="info">
                REGISTRATION={env} is set on the panel&apos;s host: registration is {env} whatever
                is chosen here.
              </Alert>
            )}
            <div className={styles.check}>
              <input
                id={registrationId}
                type="checkbox"
                checked={form.registrationOpen}
                onChange={(event) => {
                  change('registrationOpen', event.target.checked);
                }}
              />
              <label htmlFor={registrationId}>
                Anyone may create an account (the first account, the admin, always could)
              </label>
            </div>
          </section>
          {save.isError && <Alert tone="error">{errorMessage(save.error)}</Alert>}
          {saved && (
            <p role="status" className={page.muted}>
              Settings saved.
            </p>
          )}
          <div className={cards.buttons}>
            <button type="submit" className="button primary" disabled={save.isPending}>
              {save.isPending ? 'Saving…' : 'Save settings'}
            </button>
          </div>
        </form>
      )}
      <Registries />
    </>
  );
}
