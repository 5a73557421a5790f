import { describe, expect, it } from 'vitest';
import type { BackupSettings } from '../../../hooks/useBackups';
import { changesFrom, formFrom, lines } from './settingsForm';

const SETTINGS: BackupSettings = {
  keepLast: null,
  keepDays: 7,
  maxCount: 10,
  maxBytes: 1.5 * 1024 * 1024,
  beforeCommands: ['save-off', 'save-all'],
  afterCommands: ['save-on'],
  savedLine: null,
  waitSeconds: 30,
  commandsBy: null,
};

describe('backup settings form', () => {
  it('shows the settings as text: empty for none, one command per line, MiB', () => {
    expect(formFrom(SETTINGS)).toEqual({
      keepLast: '',
      keepDays: '7',
      maxCount: '10',
      maxMiB: '1.5',
      beforeCommands: 'save-off\nsave-all',
      afterCommands: 'save-on',
      savedLine: '',
      waitSeconds: '30',
    });
  });

  it('sends nothing when nothing changed, the limits untouched too', () => {
    expect(changesFrom(formFrom(SETTINGS), SETTINGS, true)).toEqual({ changes: {}, errors: {} });
  });

  it('sends only what changed, lines trimmed and blank ones left out', () => {
    const form = {
      ...formFrom(SETTINGS),
      keepLast: ' 3 ',
      keepDays: '',
      afterCommands: ' save-on \n\n say done ',
      savedLine: 'Saved the game',
      maxMiB: '2',
    };
    expect(changesFrom(form, SETTINGS, true)).toEqual({
      changes: {
        keepLast: 3,
        keepDays: null,
        afterCommands: ['save-on', 'say done'],
        savedLine: 'Saved the game',
        maxBytes: 2 * 1024 * 1024,
      },
      errors: {},
    });
  });

  it('never sends the admin-only limits for someone who is no admin', () => {
    const form = { ...formFrom(SETTINGS), maxCount: '99', maxMiB: '', keepLast: '2' };
    expect(changesFrom(form, SETTINGS, false).changes).toEqual({ keepLast: 2 });
  });

  it('names the fields that are no whole number', () => {
    const form = { ...formFrom(SETTINGS), keepLast: '12abc', waitSeconds: '', maxMiB: 'lots' };
    expect(changesFrom(form, SETTINGS, true).errors).toEqual({
      keepLast: 'A whole number, or empty for none',
      waitSeconds: 'A whole number',
      maxMiB: 'A size in MiB, or empty for no limit',
    });
  });

  it('reads one item per non-empty line', () => {
    expect(lines('a\n\n  b  \r\n')).toEqual(['a', 'b']);
  });
});
