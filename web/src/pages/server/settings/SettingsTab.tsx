import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { useBlocker } from 'react-router';
import { ApiError, errorMessage } from '../../../api/errors';
import { Alert } from '../../../components/Alert';
import { Field, SelectField } from '../../../components/Field';
import { useMe } from '../../../hooks/useMe';
import { useServerConfig } from '../../../hooks/useServer';
import { useUpdateServerConfig } from '../../../hooks/useServerSettings';
import { useSession } from '../../../hooks/useSession';
import page from '../../Page.module.css';
import { useServerOutlet } from '../outlet';
import { DeleteServer } from './DeleteServer';
import { TransferServer } from './TransferServer';
import { ImageChoice } from './ImageChoice';
import { Activity } from './Activity';
import { AllocationsForm } from './AllocationsForm';
import { LimitFields } from './LimitFields';
import { Reinstall } from './Reinstall';
import { VariablesForm } from './VariablesForm';
import styles from './Settings.module.css';
import {
  changesFrom,
  editableFields,
  fieldErrorsFrom,
  formFrom,
  isDirty,
  type ConfigChanges,
  type FieldErrors,
  type LimitsForm,
  type Runtime,
  type ServerConfig,
  type SettingsField,
  type SettingsForm,
} from './settingsForm';

const ADMIN_ONLY_NOTE = 'Only an admin can change this: it decides what runs on the host';

const RUNTIMES: readonly { value: Runtime; label: string }[] = [
  { value: 'process', label: 'Process' },
  { value: 'docker', label: 'Docker' },
];
const RUNTIME_HINT: Readonly<Record<Runtime, string>> = {
  process: "A sandboxed process on this machine, in the server's folder",
  docker: 'A container of the image below; changed only while the server is stopped',
};

/**
 * The server's Settings tab: its configuration, its activity (the route is only for holders of
 * `settings` and admins, as the server's audit log), and its deletion for admins.
 */
export default function SettingsTab() {
  const { name } = useServerOutlet();
  const config = useServerConfig(name);
  const me = useMe();
  const { session } = useSession();
  const role = me.data?.role ?? session?.role;
  // Bumped when an image is chosen below: the form is made again, its fields from the saved one
  // (never on its own save, which would lose its "Saved").
  const [imageChosen, setImageChosen] = useState(0);

  return (
    <>
      <section className={page.card} aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        {config.isError ? (
          <Alert tone="error">{errorMessage(config.error)}</Alert>
        ) : config.data === undefined ? (
          <p className={page.muted} role="status">
            Loading the settings…
          </p>
        ) : (
          <ConfigForm key={imageChosen} server={name} config={config.data} role={role} />
        )}
      </section>
      {config.data?.template != null && config.data.runtime === 'docker' && (
        <ImageChoice
          server={name}
          onChosen={() => {
            setImageChosen((count) => count + 1);
          }}
        />
      )}
      {config.data?.template != null && <VariablesForm server={name} />}
      {role === 'admin' && config.data !== undefined && (
        <AllocationsForm server={name} allocations={config.data.allocations} />
      )}
      {config.data?.template != null && <Reinstall server={name} template={config.data.template} />}
      <Activity server={name} />
      {role === 'admin' && config.data !== undefined && (
        <TransferServer server={name} node={config.data.node} />
      )}
      {role === 'admin' && config.data !== undefined && (
        <DeleteServer server={name} displayName={config.data.displayName} />
      )}
    </>
  );
}

function ConfigForm({
  server,
  config,
  role,
}: {
  server: string;
  config: ServerConfig;
  role: string | undefined;
}) {
  const save = useUpdateServerConfig(server);
  const editable = editableFields(role);
  const [form, setForm] = useState<SettingsForm>(() => formFrom(config));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [saved, setSaved] = useState(false);
  const dirty = isDirty(form, config, editable);
  const readOnly = (field: SettingsField) => !editable.includes(field);

  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) =>
      dirty && currentLocation.pathname !== nextLocation.pathname,
  );
  // A reload or a closed tab cannot be held back in the page: the browser asks instead.
  useEffect(() => {
    if (!dirty) return undefined;
    const ask = (event: BeforeUnloadEvent) => {
      event.preventDefault();
    };
    window.addEventListener('beforeunload', ask);
    return () => {
      window.removeEventListener('beforeunload', ask);
    };
  }, [dirty]);

  const set =
    <K extends keyof SettingsForm>(key: K) =>
    (value: SettingsForm[K]) => {
      setSaved(false);
      setForm((current) => ({ ...current, [key]: value }));
      // The field's refusal goes once it is edited; the others stay until the next save.
      const field = key === 'diskUnit' ? 'disk' : key;
      setErrors((current) => ({ ...current, [field]: undefined }));
    };
  const text = (key: Exclude<SettingsField, 'autoRestart' | 'runtime'>) => ({
    value: form[key],
    readOnly: readOnly(key),
    error: errors[key],
    onChange: (event: { target: { value: string } }) => {
      set(key)(event.target.value);
    },
  });
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    setSaved(false);
    save.reset();
    const { changes, errors: invalid } = changesFrom(form, config, editable);
    setErrors(invalid);
    if (Object.keys(invalid).length > 0 || Object.keys(changes).length === 0) return;
    save.mutate(changes, {
      onSuccess: (answer) => {
        setForm(formFrom(answer));
        setSaved(true);
      },
      onError: (error) => {
        if (error instanceof ApiError) setErrors(fieldErrorsFrom(error, changes).fields);
      },
    });
  };
  const sent: ConfigChanges = save.variables ?? {};
  const refusal = save.error instanceof ApiError ? fieldErrorsFrom(save.error, sent) : null;
  const showAlert = save.isError && (refusal === null || refusal.rest);

  return (
    <form className={styles.form} onSubmit={submit} noValidate>
      <p className={page.muted}>Changes apply the next time the server starts.</p>
      {role !== 'admin' && (
        <Alert tone="info">
          Only an admin can change the start and stop commands, the resource limits, the runtime and
          the image; they are shown read-only.
        </Alert>
      )}
      <Field
        label="Display name"
        name="displayName"
        hint="The name shown in the panel, 1 to 100 characters"
        {...text('displayName')}
      />
      <Field
        label="Start command"
        name="startCommand"
        spellCheck={false}
        autoCapitalize="none"
        hint={
          readOnly('startCommand')
            ? ADMIN_ONLY_NOTE
            : "Run without a shell in the server's folder; write sh -c '…' for one"
        }
        {...text('startCommand')}
      />
      <Field
        label="Stop command"
        name="stopCommand"
        spellCheck={false}
        autoCapitalize="none"
        hint={
          readOnly('stopCommand')
            ? ADMIN_ONLY_NOTE
            : 'A console line that stops the server, e.g. stop; empty: straight to SIGTERM'
        }
        {...text('stopCommand')}
      />
      <Field
        label="Stop timeout (seconds)"
        name="stopTimeoutSeconds"
        type="number"
        inputMode="numeric"
        min={0}
        max={3600}
        step={1}
        hint="How long to wait after the stop command before SIGTERM, 0 to 3600"
        {...text('stopTimeoutSeconds')}
      />
      <div className={styles.check}>
        <input
          id="settings-auto-restart"
          type="checkbox"
          name="autoRestart"
          checked={form.autoRestart}
          aria-describedby="settings-auto-restart-hint"
          onChange={(event) => {
            set('autoRestart')(event.target.checked);
          }}
        />
        <label htmlFor="settings-auto-restart">Restart after a crash</label>
        <p id="settings-auto-restart-hint" className={styles.hint}>
          Started again after 1, 2 and 4 seconds; a fourth crash within a minute leaves it crashed
        </p>
      </div>
      <fieldset className={styles.section} aria-describedby="resources-hint">
        <legend>Resources</legend>
        <p id="resources-hint" className={styles.hint}>
          Limits of the whole server, enforced by the kernel; empty: no limit.
          {readOnly('memoryMiB') ? ' Only an admin can change them.' : ''}
        </p>
        <LimitFields
          values={form}
          errors={errors}
          readOnly={readOnly('memoryMiB')}
          pidsNote={readOnly('pids') ? undefined : "empty: the panel's default"}
          onChange={(key, value) => {
            set<keyof LimitsForm>(key)(value);
          }}
        />
        {readOnly('runtime') ? (
          <Field
            label="Runtime"
            name="runtime"
            readOnly
            value={
              RUNTIMES.find((runtime) => runtime.value === form.runtime)?.label ?? form.runtime
            }
            hint={RUNTIME_HINT[form.runtime]}
          />
        ) : (
          <SelectField
            label="Runtime"
            name="runtime"
            options={RUNTIMES}
            value={form.runtime}
            error={errors.runtime}
            hint={RUNTIME_HINT[form.runtime]}
            onChange={(event) => {
              set('runtime')(event.target.value === 'docker' ? 'docker' : 'process');
            }}
          />
        )}
        <Field
          label="Image"
          name="image"
          spellCheck={false}
          autoCapitalize="none"
          placeholder={form.runtime === 'docker' ? 'e.g. itzg/minecraft-server:java21' : undefined}
          hint={
            form.runtime === 'docker'
              ? 'The container image to run; needed with Docker'
              : 'Needed only with Docker; kept, unused, with Process'
          }
          {...text('image')}
        />
      </fieldset>
      <div className={styles.actions}>
        {showAlert && <Alert tone="error">{errorMessage(save.error)}</Alert>}
        {save.isError && !showAlert && (
          <Alert tone="error">Not saved: see the fields marked above</Alert>
        )}
        {saved && <Alert tone="success">Saved</Alert>}
        <div className={styles.buttons}>
          <button type="submit" className="button primary" disabled={!dirty || save.isPending}>
            {save.isPending ? 'Saving…' : 'Save'}
          </button>
          <button
            type="button"
            className="button secondary"
            disabled={!dirty || save.isPending}
            onClick={() => {
              setForm(formFrom(config));
              setErrors({});
              save.reset();
            }}
          >
            Discard changes
          </button>
        </div>
      </div>
      {blocker.state === 'blocked' && (
        <LeaveDialog
          onLeave={() => {
            blocker.proceed();
          }}
          onStay={() => {
            blocker.reset();
          }}
        />
      )}
    </form>
  );
}

/** Asks before leaving the tab with unsaved changes; Escape (cancel) stays. */
function LeaveDialog({ onLeave, onStay }: { onLeave: () => void; onStay: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    dialog.current?.showModal();
  }, []);
  return (
    <dialog
      ref={dialog}
      className={styles.dialog}
      aria-labelledby="leave-title"
      aria-describedby="leave-text"
      onCancel={(event) => {
        event.preventDefault();
        onStay();
      }}
    >
      <h2 id="leave-title">Leave without saving?</h2>
      <p id="leave-text">The changes to the settings are not saved yet.</p>
      <div className={styles.buttons}>
        <button type="button" className="button secondary" onClick={onStay} autoFocus>
          Stay
        </button>
        <button type="button" className={`button ${styles.danger}`} onClick={onLeave}>
          Leave
        </button>
      </div>
    </dialog>
  );
}
