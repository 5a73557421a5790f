/**
 * The backup settings form as text, and what of it goes to the API: counts are typed as text (a
 * number input reads "12abc" as empty), command lists one per line, the byte limit in MiB.
 */
import type { BackupSettings, BackupSettingsInput } from '../../../hooks/useBackups';

export interface BackupSettingsForm {
  readonly keepLast: string;
  readonly keepDays: string;
  readonly maxCount: string;
  /** MiB, as a person sets a size. */
  readonly maxMiB: string;
  readonly beforeCommands: string;
  readonly afterCommands: string;
  readonly savedLine: string;
  readonly waitSeconds: string;
}

export type BackupSettingsField = keyof BackupSettingsForm;
export type BackupFieldErrors = Partial<Record<BackupSettingsField, string>>;

const MIB = 1024 * 1024;

const count = (value: number | null): string => (value === null ? '' : String(value));

export function formFrom(settings: BackupSettings): BackupSettingsForm {
  return {
    keepLast: count(settings.keepLast),
    keepDays: count(settings.keepDays),
    maxCount: count(settings.maxCount),
    maxMiB: settings.maxBytes === null ? '' : String(Number((settings.maxBytes / MIB).toFixed(2))),
    beforeCommands: settings.beforeCommands.join('\n'),
    afterCommands: settings.afterCommands.join('\n'),
    savedLine: settings.savedLine ?? '',
    waitSeconds: String(settings.waitSeconds),
  };
}

/** The non-empty lines of a text area, trimmed: one item each. */
export const lines = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

const sameList = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((item, index) => item === b[index]);

/**
 * What changed, as the API's body, or what is wrong with the fields. Only changed fields go, so
 * a person who is no admin never sends the admin-only limits (`adminFields` false).
 */
export function changesFrom(
  form: BackupSettingsForm,
  settings: BackupSettings,
  adminFields: boolean,
): { changes: BackupSettingsInput; errors: BackupFieldErrors } {
  const errors: BackupFieldErrors = {};
  const changes: { -readonly [K in keyof BackupSettingsInput]: BackupSettingsInput[K] } = {};
  const whole = (field: BackupSettingsField, text: string, optional: boolean): number | null => {
    const value = text.trim();
    if (value === '' && optional) return null;
    if (!/^\d+$/.test(value)) {
      errors[field] = optional ? 'A whole number, or empty for none' : 'A whole number';
      return null;
    }
    return Number(value);
  };

  const keepLast = whole('keepLast', form.keepLast, true);
  if (keepLast !== settings.keepLast) changes.keepLast = keepLast;
  const keepDays = whole('keepDays', form.keepDays, true);
  if (keepDays !== settings.keepDays) changes.keepDays = keepDays;
  const waitSeconds = whole('waitSeconds', form.waitSeconds, false);
  if (waitSeconds !== null && waitSeconds !== settings.waitSeconds) {
    changes.waitSeconds = waitSeconds;
  }
  const before = lines(form.beforeCommands);
  if (!sameList(before, settings.beforeCommands)) changes.beforeCommands = before;
  const after = lines(form.afterCommands);
  if (!sameList(after, settings.afterCommands)) changes.afterCommands = after;
  const savedLine = form.savedLine.trim() === '' ? null : form.savedLine.trim();
  if (savedLine !== settings.savedLine) changes.savedLine = savedLine;

  if (adminFields) {
    const maxCount = whole('maxCount', form.maxCount, true);
    if (maxCount !== settings.maxCount) changes.maxCount = maxCount;
    const mib = form.maxMiB.trim();
    if (mib === '') {
      if (settings.maxBytes !== null) changes.maxBytes = null;
    } else if (!/^\d+(\.\d+)?$/.test(mib)) {
      errors.maxMiB = 'A size in MiB, or empty for no limit';
    } else {
      const bytes = Math.round(Number(mib) * MIB);
      // The form shows MiB to two decimals: an untouched limit is not sent back rounded.
      if (mib !== formFrom(settings).maxMiB) changes.maxBytes = bytes;
    }
  }
  return { changes, errors };
}
