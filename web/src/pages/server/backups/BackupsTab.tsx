import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field, TextAreaField } from '../../../components/Field';
import { useBackupSettings, useBackups, useCreateBackup } from '../../../hooks/useBackups';
import { useMe } from '../../../hooks/useMe';
import { useSession } from '../../../hooks/useSession';
import page from '../../Page.module.css';
import { useServerOutlet } from '../outlet';
import type { Permission } from '../permissions';
import { BackupRow } from './BackupRow';
import { BackupSettingsForm } from './BackupSettingsForm';
import cards from '../../../components/Cards.module.css';
import styles from './Backups.module.css';
import { lines } from './settingsForm';

/** A form to start a backup: an optional name and patterns to leave out. */
function CreateBackup({ server }: { server: string }) {
  const create = useCreateBackup(server);
  const [name, setName] = useState('');
  const [ignore, setIgnore] = useState('');
  const [started, setStarted] = useState<string | null>(null);
  const details = create.error instanceof ApiError ? create.error.details : [];
  const at = (field: string) =>
    details.find((detail) => detail.path.startsWith(`body/${field}`))?.message;

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setStarted(null);
    const patterns = lines(ignore);
    create.mutate(
      {
        ...(name.trim() === '' ? {} : { name: name.trim() }),
        ...(patterns.length === 0 ? {} : { ignore: patterns }),
      },
      {
        onSuccess: (backup) => {
          setStarted(backup.name);
          setName('');
          setIgnore('');
        },
      },
    );
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate aria-label="Create backup">
      <div className={styles.fields}>
        <Field
          label="Name"
          name="backup-name"
          autoComplete="off"
          hint="Optional: the date and time by default"
          value={name}
          error={at('name')}
          onChange={(event) => {
            setName(event.target.value);
          }}
        />
        <TextAreaField
          label="Leave out"
          name="backup-ignore"
          rows={3}
          autoCapitalize="none"
          spellCheck={false}
          hint="Optional: patterns as in .gitignore, one per line (e.g. logs/ or *.tmp); a .backupignore file in the server's folder adds its own"
          value={ignore}
          error={at('ignore')}
          onChange={(event) => {
            setIgnore(event.target.value);
          }}
        />
      </div>
      {create.isError && <Alert tone="error">{errorMessage(create.error)}</Alert>}
      {started !== null && (
        <Alert tone="success">Backup {started} started; its progress shows in the list above</Alert>
      )}
      <div className={cards.buttons}>
        <button type="submit" className="button primary" disabled={create.isPending}>
          {create.isPending ? 'Starting…' : 'Create backup'}
        </button>
      </div>
    </form>
  );
}

/** The server's backups with their actions, a form to make one, and the backup settings. */
export default function BackupsTab() {
  const { name, status, permissions } = useServerOutlet();
  const holds = (...all: Permission[]) => all.every((each) => permissions?.has(each) === true);
  const may = {
    download: holds('backups.download', 'files.read'),
    restore: holds('backups.restore', 'files.write'),
    delete: holds('backups.delete'),
  };
  const backups = useBackups(name);
  const settings = useBackupSettings(name);
  const me = useMe();
  const { session } = useSession();
  const isAdmin = (me.data?.role ?? session?.role) === 'admin';

  return (
    <div className={cards.tab}>
      <section className={page.card} aria-labelledby="backups-title">
        <h2 id="backups-title">Backups</h2>
        {backups.isPending ? (
          <p className={page.placeholder} role="status">
            Loading backups…
          </p>
        ) : backups.isError ? (
          <Alert tone="error">{errorMessage(backups.error)}</Alert>
        ) : backups.data.length === 0 ? (
          <div className={page.placeholder}>
            <p className={page.emptyTitle}>No backups yet</p>
            <p>Create one below, or add a backup task to a schedule.</p>
          </div>
        ) : (
          <ul className={cards.list} aria-label="Backups">
            {backups.data.map((backup) => (
              <BackupRow key={backup.id} server={name} backup={backup} status={status} may={may} />
            ))}
          </ul>
        )}
      </section>

      {holds('backups.create') && (
        <section className={page.card} aria-labelledby="new-backup-title">
          <h2 id="new-backup-title">Create backup</h2>
          <CreateBackup server={name} />
        </section>
      )}

      {holds('backups.create') && (
        <section className={page.card} aria-labelledby="backup-settings-title">
          <h2 id="backup-settings-title">Backup settings</h2>
          {settings.isPending ? (
            <p className={page.placeholder} role="status">
              Loading backup settings…
            </p>
          ) : settings.isError ? (
            <Alert tone="error">{errorMessage(settings.error)}</Alert>
          ) : (
            <BackupSettingsForm
              server={name}
              settings={settings.data}
              isAdmin={isAdmin}
              mayTypeCommands={holds('console.write')}
              mayRetain={holds('backups.delete')}
            />
          )}
        </section>
      )}
    </div>
  );
}
