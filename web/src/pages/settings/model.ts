/**
 * The settings form: text fields in the units people think in (MiB, percent), turned into the
 * API's body, each field's mistake said in words next to it.
 */
import type { PanelSettings, SettingsChanges } from '../../hooks/useSettings';

export interface SettingsForm {
  pids: string;
  memoryMiB: string;
  cpuPercent: string;
  diskMiB: string;
  backupCount: string;
  backupMiB: string;
  registrationOpen: boolean;
}

export type FieldName = Exclude<keyof SettingsForm, 'registrationOpen'>;

const MIB = 1024 * 1024;

const shown = (value: number | null, unit = 1): string =>
  value === null ? '' : String(Math.round((value / unit) * 100) / 100);

export function formFrom(settings: PanelSettings): SettingsForm {
  return {
    pids: String(settings.serverDefaults.pids),
    memoryMiB: shown(settings.serverDefaults.memoryBytes, MIB),
    cpuPercent: shown(settings.serverDefaults.cpuPercent),
    diskMiB: shown(settings.serverDefaults.diskBytes, MIB),
    backupCount: String(settings.backupDefaults.maxCount),
    backupMiB: shown(settings.backupDefaults.maxBytes, MIB),
    registrationOpen: settings.registrationOpen,
  };
}

interface Rule {
  readonly required: boolean;
  readonly min: number;
  readonly max: number;
  readonly unit: number;
  readonly what: string;
}

const RULES: Record<FieldName, Rule> = {
  pids: { required: true, min: 1, max: 4_194_304, unit: 1, what: 'processes' },
  memoryMiB: { required: false, min: 8, max: 2 ** 30, unit: MIB, what: 'MiB' },
  cpuPercent: { required: false, min: 1, max: 102_400, unit: 1, what: 'percent' },
  diskMiB: { required: false, min: 1, max: 2 ** 33, unit: MIB, what: 'MiB' },
  backupCount: { required: true, min: 1, max: 10_000, unit: 1, what: 'backups' },
  backupMiB: { required: false, min: 1, max: 2 ** 33, unit: MIB, what: 'MiB' },
};

/** The body to send, or what is wrong with each field. */
export function bodyFrom(
  form: SettingsForm,
): { body: SettingsChanges } | { errors: Partial<Record<FieldName, string>> } {
  const errors: Partial<Record<FieldName, string>> = {};
  const values = {} as Record<FieldName, number | null>;
  for (const [name, rule] of Object.entries(RULES) as [FieldName, Rule][]) {
    const text = form[name].trim();
    if (text === '') {
      if (rule.required) errors[name] = 'Required: a whole number';
      values[name] = null;
      continue;
    }
    const number = Number(text);
    const whole = rule.unit === 1 ? Number.isInteger(number) : Number.isFinite(number);
    if (!whole) {
      errors[name] = rule.unit === 1 ? 'Must be a whole number' : 'Must be a number';
    } else if (number < rule.min || number > rule.max) {
      errors[name] = `Must be between ${rule.min} and ${rule.max} ${rule.what}`;
    }
    values[name] = Math.round(number * rule.unit);
  }
  if (Object.keys(errors).length > 0) return { errors };
  return {
    body: {
      serverDefaults: {
        pids: values.pids ?? 1,
        memoryBytes: values.memoryMiB,
        cpuPercent: values.cpuPercent,
        diskBytes: values.diskMiB,
      },
      backupDefaults: { maxCount: values.backupCount ?? 1, maxBytes: values.backupMiB },
      registrationOpen: form.registrationOpen,
    },
  };
}
