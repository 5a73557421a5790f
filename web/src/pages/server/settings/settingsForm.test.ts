import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/errors';
import {
  changesFrom,
  editableFields,
  fieldErrorsFrom,
  formFrom,
  isDirty,
  type ServerConfig,
} from './settingsForm';

const CONFIG: ServerConfig = {
  name: 'survival',
  displayName: 'Survival',
  startCommand: 'java -jar server.jar nogui',
  stopCommand: 'stop',
  stopTimeoutSeconds: 10,
  autoRestart: false,
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

describe('the API refusal', () => {
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
