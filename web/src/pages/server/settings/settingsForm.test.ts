import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/errors';
import {
  changesFrom,
  editableFields,
  fieldErrorsFrom,
  formFrom,
  GIB,
  isDirty,
  limitFrom,
  MIB,
  type ServerConfig,
} from './settingsForm';

const CONFIG: ServerConfig = {
  name: 'survival',
  displayName: 'Survival',
  startCommand: 'java -jar server.jar nogui',
  stopCommand: 'stop',
  stopTimeoutSeconds: 10,
  autoRestart: false,
  limits: { memoryBytes: null, cpuPercent: null, pids: null, diskBytes: null },
  runtime: 'process',
  image: null,
  template: null,
  install: { state: 'installed', exitCode: null, finishedAt: null, reason: null },
  allocations: [],
  node: 'local',
  createdAt: '2025-01-01T00:00:00.000Z',
};

describe('settings form', () => {
  it('starts from the configuration, a missing stop command as empty text', () => {
    expect(formFrom({ ...CONFIG, stopCommand: null })).toEqual({
      displayName: 'Survival',
      startCommand: 'java -jar server.jar nogui',
      stopCommand: '',
      stopTimeoutSeconds: '10',
      autoRestart: false,
      memoryMiB: '',
      cpuPercent: '',
      pids: '',
      disk: '',
      diskUnit: 'MiB',
      runtime: 'process',
      image: '',
    });
  });

  it('lets admins change every field and others all but the commands', () => {
    expect(editableFields('admin')).toContain('startCommand');
    expect(editableFields('user')).toEqual(['displayName', 'stopTimeoutSeconds', 'autoRestart']);
    expect(editableFields(undefined)).not.toContain('stopCommand');
  });

  it('sends only what changed', () => {
    const form = { ...formFrom(CONFIG), displayName: 'Hardcore', stopTimeoutSeconds: ' 30 ' };
    expect(changesFrom(form, CONFIG, editableFields('admin'))).toEqual({
      changes: { displayName: 'Hardcore', stopTimeoutSeconds: 30 },
      errors: {},
    });
    expect(changesFrom(formFrom(CONFIG), CONFIG, editableFields('admin')).changes).toEqual({});
  });

  it('sends an emptied stop command as null, and the switch as a boolean', () => {
    const form = { ...formFrom(CONFIG), stopCommand: '', autoRestart: true };
    expect(changesFrom(form, CONFIG, editableFields('admin')).changes).toEqual({
      stopCommand: null,
      autoRestart: true,
    });
  });

  it('never sends a field the role may not change', () => {
    const form = { ...formFrom(CONFIG), startCommand: 'sh -c evil', stopTimeoutSeconds: '5' };
    expect(changesFrom(form, CONFIG, editableFields('user')).changes).toEqual({
      stopTimeoutSeconds: 5,
    });
    expect(
      isDirty({ ...formFrom(CONFIG), startCommand: 'x' }, CONFIG, editableFields('user')),
    ).toBe(false);
  });

  it('refuses a timeout that is no number, and leaves its range to the API', () => {
    for (const text of ['', 'ten', '  ']) {
      const form = { ...formFrom(CONFIG), stopTimeoutSeconds: text };
      expect(changesFrom(form, CONFIG, editableFields('user')).errors).toEqual({
        stopTimeoutSeconds: 'Enter a number of seconds',
      });
    }
    const far = { ...formFrom(CONFIG), stopTimeoutSeconds: '99999' };
    expect(changesFrom(far, CONFIG, editableFields('user')).changes).toEqual({
      stopTimeoutSeconds: 99999,
    });
  });

  it('knows when the form differs from what is saved', () => {
    expect(isDirty(formFrom(CONFIG), CONFIG, editableFields('admin'))).toBe(false);
    expect(
      isDirty({ ...formFrom(CONFIG), autoRestart: true }, CONFIG, editableFields('user')),
    ).toBe(true);
  });
});

const LIMITED: ServerConfig = {
  ...CONFIG,
  limits: { memoryBytes: 512 * MIB, cpuPercent: 200, pids: 64, diskBytes: 10 * GIB },
  runtime: 'docker',
  image: 'itzg/minecraft-server',
};

describe('the Resources section', () => {
  it('shows memory in MiB, disk in GiB when whole, and no limit as empty text', () => {
    expect(formFrom(LIMITED)).toMatchObject({
      memoryMiB: '512',
      cpuPercent: '200',
      pids: '64',
      disk: '10',
      diskUnit: 'GiB',
      runtime: 'docker',
      image: 'itzg/minecraft-server',
    });
    const odd = { ...LIMITED, limits: { ...LIMITED.limits, diskBytes: 1536 * MIB } };
    expect(formFrom(odd)).toMatchObject({ disk: '1536', diskUnit: 'MiB' });
    // Bytes that are no whole MiB read back exactly, so an untouched form sends nothing.
    const bytes = { ...LIMITED, limits: { ...LIMITED.limits, memoryBytes: 100_000_000 } };
    expect(formFrom(bytes).memoryMiB).toBe('95.367431640625');
    expect(changesFrom(formFrom(bytes), bytes, editableFields('admin')).changes).toEqual({});
  });

  it('turns text into the API value: empty is null, MiB and GiB are whole bytes', () => {
    expect(limitFrom('')).toEqual({ value: null });
    expect(limitFrom('  ')).toEqual({ value: null });
    expect(limitFrom('512', MIB)).toEqual({ value: 512 * MIB });
    expect(limitFrom('1.5', GIB)).toEqual({ value: 1.5 * GIB });
    expect(limitFrom('0.3', MIB)).toEqual({ value: Math.round(0.3 * MIB) });
    expect(limitFrom(' 150 ')).toEqual({ value: 150 });
    // Out of range is the API's to say; only what is no number stays in the form.
    expect(limitFrom('-4')).toEqual({ value: -4 });
    expect(limitFrom('lots')).toEqual({ error: 'Enter a number, or leave it empty for no limit' });
  });

  it('sends only the limits that changed, null for a lifted one', () => {
    const form = { ...formFrom(LIMITED), memoryMiB: '1024', pids: '' };
    expect(changesFrom(form, LIMITED, editableFields('admin'))).toEqual({
      changes: { limits: { memoryBytes: 1024 * MIB, pids: null } },
      errors: {},
    });
    const set = { ...formFrom(CONFIG), cpuPercent: '150', disk: '2', diskUnit: 'GiB' as const };
    expect(changesFrom(set, CONFIG, editableFields('admin')).changes).toEqual({
      limits: { cpuPercent: 150, diskBytes: 2 * GIB },
    });
  });

  it('counts a new disk unit as a change of the disk limit', () => {
    const form = { ...formFrom(LIMITED), diskUnit: 'MiB' as const };
    expect(isDirty(form, LIMITED, editableFields('admin'))).toBe(true);
    expect(changesFrom(form, LIMITED, editableFields('admin')).changes).toEqual({
      limits: { diskBytes: 10 * MIB },
    });
    const none = { ...formFrom(CONFIG), diskUnit: 'GiB' as const };
    expect(isDirty(none, CONFIG, editableFields('admin'))).toBe(false);
  });

  it('sends the runtime and an emptied image as null', () => {
    const form = { ...formFrom(LIMITED), runtime: 'process' as const, image: ' ' };
    expect(changesFrom(form, LIMITED, editableFields('admin')).changes).toEqual({
      runtime: 'process',
      image: null,
    });
  });

  it('refuses a limit that is no number, at its field', () => {
    const form = { ...formFrom(CONFIG), memoryMiB: '512 MB', cpuPercent: '50' };
    expect(changesFrom(form, CONFIG, editableFields('admin'))).toEqual({
      changes: { limits: { cpuPercent: 50 } },
      errors: { memoryMiB: 'Enter a number, or leave it empty for no limit' },
    });
  });

  it('never sends limits, runtime or image for someone who is not an admin', () => {
    const form = { ...formFrom(CONFIG), memoryMiB: '64', runtime: 'docker' as const, image: 'x' };
    expect(changesFrom(form, CONFIG, editableFields('user')).changes).toEqual({});
    expect(isDirty(form, CONFIG, editableFields('support'))).toBe(false);
  });
});

describe('the API refusal', () => {
  it('puts a refused limit at its field, once, its bytes also in MiB', () => {
    const error = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body/limits/memoryBytes', message: 'must be >= 8388608' },
      { path: 'body/limits/memoryBytes', message: 'must be null' },
      { path: 'body/limits/memoryBytes', message: 'must match a schema in anyOf' },
      { path: 'body/limits/pids', message: 'must be integer' },
      { path: 'body/limits/pids', message: 'must be null' },
    ]);
    expect(fieldErrorsFrom(error)).toEqual({
      fields: { memoryMiB: 'must be >= 8388608 (8 MiB)', pids: 'must be integer' },
      rest: false,
    });
    const said = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body/limits/memoryBytes', message: 'must be >= 8388608, or null' },
    ]);
    expect(fieldErrorsFrom(said).fields).toEqual({
      memoryMiB: 'must be >= 8388608 (8 MiB), or null',
    });
    const image = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body/image', message: 'the docker runtime needs an image' },
    ]);
    expect(fieldErrorsFrom(image).fields).toEqual({ image: 'the docker runtime needs an image' });
    const unknown = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body/limits/swapBytes', message: 'unknown field' },
    ]);
    expect(fieldErrorsFrom(unknown)).toEqual({ fields: {}, rest: true });
  });

  it('puts a 409 at the runtime when the runtime was changed, else in the alert', () => {
    const running = new ApiError(409, 'CONFLICT', 'Stop the server before changing its runtime');
    expect(fieldErrorsFrom(running, { runtime: 'docker' })).toEqual({
      fields: { runtime: 'Stop the server before changing its runtime' },
      rest: false,
    });
    expect(fieldErrorsFrom(running, { displayName: 'x' })).toEqual({ fields: {}, rest: true });
  });

  it('goes next to the fields it names', () => {
    const error = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body/stopTimeoutSeconds', message: 'must be <= 3600' },
      { path: 'body/displayName', message: 'must NOT have fewer than 1 characters' },
    ]);
    expect(fieldErrorsFrom(error)).toEqual({
      fields: {
        stopTimeoutSeconds: 'must be <= 3600',
        displayName: 'must NOT have fewer than 1 characters',
      },
      rest: false,
    });
  });

  it('goes to an alert when it names no field of the form', () => {
    expect(fieldErrorsFrom(new ApiError(403, 'FORBIDDEN', 'Only an admin…'))).toEqual({
      fields: {},
      rest: true,
    });
    const unknown = new ApiError(400, 'VALIDATION_FAILED', 'x', null, [
      { path: 'body', message: 'must NOT have fewer than 1 properties' },
    ]);
    expect(fieldErrorsFrom(unknown).rest).toBe(true);
  });
});
