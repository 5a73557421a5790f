/**
 * The Settings form's own logic, no React: the form from a configuration, what changed (only
 * that is sent), and the API's refusals placed next to their fields.
 */
import type { ApiError, ErrorDetail } from '../../../api/errors';
import type { AnswerData, RequestBody } from '../../../api/types';

/** The configuration, as read or as saved (a save does not answer the caller's permissions). */
export type ServerConfig = Omit<AnswerData<'/api/servers/{server}/config', 'get'>, 'permissions'>;
export type ConfigChanges = RequestBody<'/api/servers/{server}/config', 'put'>;
type Limits = ServerConfig['limits'];
export type LimitKey = keyof Limits;
export type Runtime = ServerConfig['runtime'];

/** The fields of the form, in the order shown. */
export const FIELDS = [
  'displayName',
  'startCommand',
  'stopCommand',
  'stopTimeoutSeconds',
  'autoRestart',
  'memoryMiB',
  'cpuPercent',
  'pids',
  'disk',
  'runtime',
  'image',
] as const;
export type SettingsField = (typeof FIELDS)[number];

/** The fields of the Resources section, each the form's text for one of the API's limits. */
export const LIMIT_FIELDS = {
  memoryBytes: 'memoryMiB',
  cpuPercent: 'cpuPercent',
  pids: 'pids',
  diskBytes: 'disk',
} as const satisfies Record<LimitKey, SettingsField>;

/**
 * The commands, limits, runtime and image decide what runs on the host and with how much of it:
 * the API lets only admins change them.
 */
export const ADMIN_ONLY: readonly SettingsField[] = [
  'startCommand',
  'stopCommand',
  'memoryMiB',
  'cpuPercent',
  'pids',
  'disk',
  'runtime',
  'image',
];

export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;
export type DiskUnit = 'MiB' | 'GiB';
const DISK_UNITS: Readonly<Record<DiskUnit, number>> = { MiB: MIB, GiB: GIB };

/**
 * The four limits as typed, in the units shown: the Resources section of this form and the limits
 * of the servers page's create form (docs/web.md).
 */
export interface LimitsForm {
  /** Memory limit in MiB. */
  readonly memoryMiB: string;
  /** CPU limit in percent of one core. */
  readonly cpuPercent: string;
  readonly pids: string;
  /** Disk limit in `diskUnit`. */
  readonly disk: string;
  readonly diskUnit: DiskUnit;
}
export type LimitField = (typeof LIMIT_FIELDS)[LimitKey];
export type LimitErrors = Partial<Record<LimitField, string>>;

/** What the person typed: text as typed (empty: no limit), the switch as a boolean. */
export interface SettingsForm extends LimitsForm {
  readonly displayName: string;
  readonly startCommand: string;
  readonly stopCommand: string;
  readonly stopTimeoutSeconds: string;
  readonly autoRestart: boolean;
  readonly runtime: Runtime;
  readonly image: string;
}

export type FieldErrors = Partial<Record<SettingsField, string>>;

/** A limit as text: empty for none; bytes / 2^20 is exact in a double, so it reads back as is. */
const limitText = (value: number | null, unit = 1): string =>
  value === null ? '' : String(value / unit);

/** The disk limit in whole GiB when it is one, else in MiB. */
export function diskUnitOf(bytes: number | null): DiskUnit {
  return bytes !== null && bytes >= GIB && bytes % GIB === 0 ? 'GiB' : 'MiB';
}

/** Limits (bytes, percent, processes; null: none) as the form shows them. */
export function limitsFormFrom(limits: Limits): LimitsForm {
  const diskUnit = diskUnitOf(limits.diskBytes);
  return {
    memoryMiB: limitText(limits.memoryBytes, MIB),
    cpuPercent: limitText(limits.cpuPercent),
    pids: limitText(limits.pids),
    disk: limitText(limits.diskBytes, DISK_UNITS[diskUnit]),
    diskUnit,
  };
}

export function formFrom(config: ServerConfig): SettingsForm {
  return {
    displayName: config.displayName,
    startCommand: config.startCommand,
    stopCommand: config.stopCommand ?? '',
    stopTimeoutSeconds: String(config.stopTimeoutSeconds),
    autoRestart: config.autoRestart,
    ...limitsFormFrom(config.limits),
    runtime: config.runtime,
    image: config.image ?? '',
  };
}

export const editableFields = (role: string | undefined): readonly SettingsField[] =>
  role === 'admin' ? FIELDS : FIELDS.filter((field) => !ADMIN_ONLY.includes(field));

const NOT_A_LIMIT = 'Enter a number, or leave it empty for no limit';

/**
 * A limit's text as the API's value: empty is `null` (no limit), a number is multiplied by its
 * unit (MiB and GiB to whole bytes), anything else is no value at all. Whether the number is in
 * range (at least 8 MiB, a whole number of processes) is the API's to say.
 */
export function limitFrom(text: string, unit = 1): { value: number | null } | { error: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { value: null };
  const number = Number(trimmed);
  if (!Number.isFinite(number)) return { error: NOT_A_LIMIT };
  return { value: unit === 1 ? number : Math.round(number * unit) };
}

const unitOf = (key: LimitKey, form: LimitsForm): number =>
  key === 'memoryBytes' ? MIB : key === 'diskBytes' ? DISK_UNITS[form.diskUnit] : 1;

/**
 * Each limit's text as the API's value (`limitFrom`, in the field's unit), or, for a text that is
 * no number, its error.
 */
export function limitValuesFrom(form: LimitsForm): {
  values: Partial<Record<LimitKey, number | null>>;
  errors: LimitErrors;
} {
  const values: Partial<Record<LimitKey, number | null>> = {};
  const errors: LimitErrors = {};
  for (const key of Object.keys(LIMIT_FIELDS) as LimitKey[]) {
    const field = LIMIT_FIELDS[key];
    const limit = limitFrom(form[field], unitOf(key, form));
    if ('error' in limit) errors[field] = limit.error;
    else values[key] = limit.value;
  }
  return { values, errors };
}

/**
 * The changes to send: only editable fields whose value differs from the configuration. An
 * empty stop command is `null` (no stop command: straight to SIGTERM), and so is an emptied
 * limit (the limit is lifted) or image. `limits` holds only the limits that changed. A timeout or
 * a limit that is not a number at all cannot be sent, and is an error of the form; whether it is
 * in range is the API's to say.
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
  const limits: Partial<Record<LimitKey, number | null>> = {};
  const typed = limitValuesFrom(form);
  for (const key of Object.keys(LIMIT_FIELDS) as LimitKey[]) {
    const field = LIMIT_FIELDS[key];
    if (!may(field)) continue;
    const error = typed.errors[field];
    const value = typed.values[key];
    if (error !== undefined) errors[field] = error;
    else if (value !== undefined && value !== config.limits[key]) limits[key] = value;
  }
  if (Object.keys(limits).length > 0) changes.limits = limits;
  if (may('runtime') && form.runtime !== config.runtime) changes.runtime = form.runtime;
  const image = form.image.trim() === '' ? null : form.image.trim();
  if (may('image') && image !== config.image) changes.image = image;
  return { changes, errors };
}

/** Whether the form differs from the configuration in a field the person may change. */
export function isDirty(
  form: SettingsForm,
  config: ServerConfig,
  editable: readonly SettingsField[],
): boolean {
  const saved = formFrom(config);
  return (
    editable.some((field) => form[field] !== saved[field]) ||
    (editable.includes('disk') && form.disk.trim() !== '' && form.diskUnit !== saved.diskUnit)
  );
}

const isField = (name: string): name is SettingsField =>
  (FIELDS as readonly string[]).includes(name);

/** The form's field a detail's path names: `body/<field>`, or `body/limits/<limit>`. */
function fieldOf(path: string): SettingsField | null {
  const limit = /^body\/limits\/(\w+)$/.exec(path)?.[1];
  if (limit !== undefined) {
    return Object.hasOwn(LIMIT_FIELDS, limit) ? LIMIT_FIELDS[limit as LimitKey] : null;
  }
  const name = /^body\/(\w+)$/.exec(path)?.[1];
  return name !== undefined && isField(name) && !Object.values(LIMIT_FIELDS).includes(name as never)
    ? name
    : null;
}

/** What a nullable limit's schema adds to every refusal of it (its `null` branch, the union). */
const UNION_NOISE = new Set(['must be null', 'must match a schema in anyOf']);

/** The limits the form shows in MiB or GiB, whose bounds the API gives in bytes. */
const BYTE_FIELDS: readonly SettingsField[] = ['memoryMiB', 'disk'];

/**
 * "must be >= 8388608" (or "…, or null") of a size, with the size as people read it:
 * "must be >= 8388608 (8 MiB), or null".
 */
function inUnits(message: string): string {
  const match = /^(must be [<>]=? )(\d+)(.*)$/.exec(message);
  if (match === null) return message;
  const [, rule = '', bytes = '', rest = ''] = match;
  const mib = Number(bytes) / MIB;
  return Number.isInteger(mib) ? `${rule}${bytes} (${mib} MiB)${rest}` : message;
}

/**
 * The API's refusal, placed: each detail naming a field of the form (`body/<field>`,
 * `body/limits/<limit>`) goes next to it; `rest` is what no field can show (a 403, a failure
 * without details), for an alert. The API says a nullable limit's refusal once ("must be >= 1,
 * or null"); should it give the union's branches one by one ("must be null", "must match a
 * schema in anyOf"), only the telling one is shown. A 409 to a change of runtime (the server is not
 * stopped) has no details, and goes next to the runtime when the runtime was among the changes.
 */
export function fieldErrorsFrom(
  error: ApiError,
  sent: ConfigChanges = {},
): { fields: FieldErrors; rest: boolean } {
  if (error.status === 409 && error.details.length === 0 && sent.runtime !== undefined) {
    return { fields: { runtime: error.message }, rest: false };
  }
  const { fields, unplaced } = placed(error.details);
  return { fields, rest: error.details.length === 0 || unplaced };
}

/** Each detail's message next to the field it names; `unplaced` when one names none. */
function placed(details: readonly ErrorDetail[]): { fields: FieldErrors; unplaced: boolean } {
  const messages = new Map<SettingsField, string[]>();
  let unplaced = false;
  for (const detail of details) {
    const name = fieldOf(detail.path);
    if (name === null) unplaced = true;
    else messages.set(name, [...(messages.get(name) ?? []), detail.message]);
  }
  const fields: FieldErrors = {};
  for (const [name, all] of messages) {
    const telling = all.filter((message) => !UNION_NOISE.has(message));
    const shown = (telling.length > 0 ? telling : all).map((message) =>
      BYTE_FIELDS.includes(name) ? inUnits(message) : message,
    );
    fields[name] = shown.join('; ');
  }
  return { fields, unplaced };
}

const isLimitField = (field: string): field is LimitField =>
  (Object.values(LIMIT_FIELDS) as string[]).includes(field);

/**
 * The refusal of a request that sent `limits` among other things (a new server): the details
 * naming a limit (`body/limits/<limit>`) placed next to its field, in the same words as on this
 * form; `rest` when something else is refused too (or nothing is named), for an alert.
 */
export function limitErrorsFrom(error: ApiError): { fields: LimitErrors; rest: boolean } {
  const ours = error.details.filter((detail) => detail.path.startsWith('body/limits/'));
  const { fields, unplaced } = placed(ours);
  const limits: LimitErrors = {};
  for (const [field, message] of Object.entries(fields)) {
    if (isLimitField(field)) limits[field] = message;
  }
  return {
    fields: limits,
    rest: unplaced || ours.length < error.details.length || ours.length === 0,
  };
}
