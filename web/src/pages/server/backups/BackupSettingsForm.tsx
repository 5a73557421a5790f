import { useState, type SyntheticEvent } from 'react';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field, TextAreaField, Unit } from '../../../components/Field';
import { useSaveBackupSettings, type BackupSettings } from '../../../hooks/useBackups';
import {
  changesFrom,
  formFrom,
  type BackupFieldErrors,
  type BackupSettingsField,
  type BackupSettingsForm as Form,
} from './settingsForm';
import cards from '../../../components/Cards.module.css';
import styles from './Backups.module.css';

/** The API's field of each form field, for its validation `details`. */
const API_FIELD: Record<BackupSettingsField, string> = {
  keepLast: 'keepLast',
  keepDays: 'keepDays',
  maxCount: 'maxCount',
  maxMiB: 'maxBytes',
  beforeCommands: 'beforeCommands',
  afterCommands: 'afterCommands',
  savedLine: 'savedLine',
  waitSeconds: 'waitSeconds',
};

/**
 * Retention, the save commands around a backup of a running server, and the admin-only limits
 * (read-only to others, as the Settings tab shows the host's fields).
 */
export function BackupSettingsForm({
  server,
  settings,
  isAdmin,
  mayTypeCommands,
  mayRetain,
}: {
  server: string;
  settings: BackupSettings;
  isAdmin: boolean;
  /** Holds console.write: the save commands are typed in the name of whoever set them. */
  mayTypeCommands: boolean;
  /** Holds backups.delete: retention deletes backups. */
  mayRetain: boolean;
}) {
  const save = useSaveBackupSettings(server);
  const [form, setForm] = useState<Form>(() => formFrom(settings));
  const [errors, setErrors] = useState<BackupFieldErrors>({});
  const [saved, setSaved] = useState(false);

  const details = save.error instanceof ApiError ? save.error.details : [];
  const errorOf = (field: BackupSettingsField) =>
    errors[field] ??
    details.find((detail) => detail.path.startsWith(`body/${API_FIELD[field]}`))?.message;
  const text = (field: BackupSettingsField) => ({
    value: form[field],
    error: errorOf(field),
    onChange: (event: { target: { value: string } }) => {
      setSaved(false);
      setForm((current) => ({ ...current, [field]: event.target.value }));
      setErrors((current) => ({ ...current, [field]: undefined }));
    },
  });
  const count = (field: BackupSettingsField) => ({
    ...text(field),
    inputMode: 'numeric' as const,
    autoComplete: 'off',
  });
  const limit = (field: 'maxCount' | 'maxMiB') => ({
    ...count(field),
    inputMode: 'decimal' as const,
    readOnly: !isAdmin,
    placeholder: isAdmin ? 'No limit (empty)' : 'No limit',
  });

  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setSaved(false);
    save.reset();
    const { changes, errors: invalid } = changesFrom(form, settings, isAdmin);
    setErrors(invalid);
    if (Object.keys(invalid).length > 0) return;
    if (Object.keys(changes).length === 0) {
      setSaved(true);
      return;
    }
    save.mutate(changes, {
      onSuccess: (next) => {
        setForm(formFrom(next));
        setSaved(true);
      },
    });
  };

  return (
    <form className={styles.form} onSubmit={submit} noValidate aria-label="Backup settings">
      <fieldset className={styles.group}>
        <legend>Retention</legend>
        <p className={styles.note}>
          After each backup, older unlocked backups past these are deleted. Empty keeps them all.
          {mayRetain ? '' : ' Changing them needs the backups.delete permission.'}
        </p>
        <div className={styles.fields}>
          <Field
            label="Keep the newest"
            after={<Unit label="" value="backups" />}
            {...count('keepLast')}
            readOnly={!mayRetain}
          />
          <Field
            label="Delete older than"
            after={<Unit label="" value="days" />}
            {...count('keepDays')}
            readOnly={!mayRetain}
          />
        </div>
      </fieldset>

      <fieldset className={styles.group}>
        <legend>Saving first</legend>
        <p className={styles.note}>
          Sent to a running server before its files are packed, so what is on disk is whole (e.g.
          save-off, save-all), and after (save-on). A stopped server is packed as it is. They are
          typed in the name of whoever set them
          {settings.commandsBy === null ? '' : ` (now ${settings.commandsBy})`}, and only while that
          person may type into the console.
          {mayTypeCommands ? '' : ' Changing them needs the console.write permission.'}
        </p>
        <div className={styles.fields}>
          <TextAreaField
            label="Commands before the backup"
            hint="One per line"
            rows={3}
            autoCapitalize="none"
            spellCheck={false}
            {...text('beforeCommands')}
            readOnly={!mayTypeCommands}
          />
          <TextAreaField
            label="Commands after the backup"
            hint="One per line"
            rows={3}
            autoCapitalize="none"
            spellCheck={false}
            {...text('afterCommands')}
            readOnly={!mayTypeCommands}
          />
          <Field
            label="Saved line"
            hint="Console text that says the save is done; empty: pack right after the commands"
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            {...text('savedLine')}
          />
          <Field
            label="Wait for the saved line"
            hint="Then the files are packed anyway, and the backup says so"
            after={<Unit label="" value="seconds" />}
            {...count('waitSeconds')}
          />
        </div>
      </fieldset>

      <fieldset className={styles.group}>
        <legend>Limits</legend>
        <p className={styles.note}>
          A backup past these is refused.{isAdmin ? '' : ' Only an admin can change them.'}
        </p>
        <div className={styles.fields}>
          <Field
            label="Most backups"
            after={<Unit label="" value="backups" />}
            {...limit('maxCount')}
          />
          <Field label="Most space" after={<Unit label="" value="MiB" />} {...limit('maxMiB')} />
        </div>
      </fieldset>

      {save.isError && <Alert tone="error">{errorMessage(save.error)}</Alert>}
      {saved && <Alert tone="success">Backup settings saved</Alert>}
      <div className={cards.buttons}>
        <button type="submit" className="button primary" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save backup settings'}
        </button>
      </div>
    </form>
  );
}
