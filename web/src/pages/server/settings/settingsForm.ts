/**
 * The Settings form's own logic, no React: the form from a configuration, what changed (only
 * that is sent), and the API's refusals placed next to their fields.
 */
import type { ApiError } from '../../../api/errors';
import type { paths } from '../../../api/schema';

type ConfigPath = paths['/api/servers/{server}/config'];
export type ServerConfig =
  ConfigPath['get']['responses'][200]['content']['application/json']['data'];
export type ConfigChanges = NonNullable<
  ConfigPath['put']['requestBody']
>['content']['application/json'];

/** The fields of the form, in the order shown. */
export const FIELDS = [
  'displayName',
  'startCommand',
  'stopCommand',
  'stopTimeoutSeconds',
  'autoRestart',
] as const;
export type SettingsField = (typeof FIELDS)[number];

/** The commands decide what runs on the host: the API lets only admins change them. */
export const ADMIN_ONLY: readonly SettingsField[] = ['startCommand', 'stopCommand'];

/** What the person typed: text as typed, the switch as a boolean. */
export interface SettingsForm {
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string;
  readonly stopTimeoutSeconds: string;
  readonly autoRestart: boolean;
}

export type FieldErrors = Partial<Record<SettingsField, string>>;

export function formFrom(config: ServerConfig): SettingsForm {
  return {
    displayName: config.displayName,
    startCommand: config.startCommand,
    stopCommand: config.stopCommand ?? '',
    stopTimeoutSeconds: String(config.stopTimeoutSeconds),
    autoRestart: config.autoRestart,
  };
}

export const editableFields = (role: string | undefined): readonly SettingsField[] =>
  role === 'admin' ? FIELDS : FIELDS.filter((field) => !ADMIN_ONLY.includes(field));

/**
 * The changes to send: only editable fields whose value differs from the configuration. An
 * empty stop command is `null` (no stop command: straight to SIGTERM). A timeout that is not a
 * number at all cannot be sent, and is an error of the form; whether it is in range is the
 * API's to say.
 */
export function changesFrom(
  form: SettingsForm,
  config: ServerConfig,
  editable: readonly SettingsField[],
): { changes: ConfigChanges; errors: FieldErrors } {
  const changes: { -readonly [K in keyof ConfigChanges]: ConfigChanges[K] } = {};
  const errors: FieldErrors = {};
  const may = (field: SettingsField) => editable.includes(field);
  if (may('displayName') && form.displayName !== config.displayName) {
    changes.displayName = form.displayName;
  }
  if (may('startCommand') && form.startCommand !== config.startCommand) {
    changes.startCommand = form.startCommand;
  }
  const stopCommand = form.stopCommand === '' ? null : form.stopCommand;
  if (may('stopCommand') && stopCommand !== config.stopCommand) changes.stopCommand = stopCommand;
  if (may('stopTimeoutSeconds')) {
    const text = form.stopTimeoutSeconds.trim();
    const seconds = Number(text);
    if (text === '' || !Number.isFinite(seconds)) {
      errors.stopTimeoutSeconds = 'Enter a number of seconds';
    } else if (seconds !== config.stopTimeoutSeconds) {
      changes.stopTimeoutSeconds = seconds;
    }
  }
  if (may('autoRestart') && form.autoRestart !== config.autoRestart) {
    changes.autoRestart = form.autoRestart;
  }
  return { changes, errors };
}

/** Whether the form differs from the configuration in a field the person may change. */
export function isDirty(
  form: SettingsForm,
  config: ServerConfig,
  editable: readonly SettingsField[],
): boolean {
  const saved = formFrom(config);
  return editable.some((field) => form[field] !== saved[field]);
}

const isField = (name: string): name is SettingsField =>
  (FIELDS as readonly string[]).includes(name);

/**
 * The API's refusal, placed: each detail naming a field of the form (`body/<field>`) goes next
 * to it; `rest` is what no field can show (a 403, a failure without details), for an alert.
 */
export function fieldErrorsFrom(error: ApiError): { fields: FieldErrors; rest: boolean } {
  const fields: FieldErrors = {};
  let rest = error.details.length === 0;
  for (const detail of error.details) {
    const name = /^body\/(\w+)$/.exec(detail.path)?.[1];
    if (name !== undefined && isField(name)) {
      fields[name] =
        fields[name] === undefined ? detail.message : `${fields[name]}; ${detail.message}`;
    } else {
      rest = true;
    }
  }
  return { fields, rest };
}
