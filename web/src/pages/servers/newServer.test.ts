import { describe, expect, it } from 'vitest';
import { providerLoginHref } from '../sign-in/providerLoginHref';
import { ApiError } from '../../api/errors';
import { limitErrorsFrom, limitsFormFrom, MIB, GIB } from '../server/settings/settingsForm';
import {
  EMPTY_FORM,
  newServerFrom,
  nodeOptionLabel,
  PIDS_REQUIRED,
  portProblem,
} from './newServer';

describe('newServerFrom', () => {
  it('sends optional fields only when filled in, trimmed', () => {
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: ' mc ',
        displayName: '  ',
        startCommand: ' java -jar s.jar ',
        stopCommand: '',
      }),
    ).toEqual({ server: { name: 'mc', startCommand: 'java -jar s.jar' } });
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: 'mc',
        displayName: 'Survival',
        startCommand: 'x',
        stopCommand: 'stop',
      }),
    ).toEqual({
      server: { name: 'mc', displayName: 'Survival', startCommand: 'x', stopCommand: 'stop' },
    });
  });

  it('sends a template with its variables and no commands', () => {
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: 'mc',
        template: 'paper',
        variables: { MOTD: 'Hello', VERSION: '' },
        startCommand: 'ignored',
        stopCommand: 'ignored',
      }),
    ).toEqual({
      server: { name: 'mc', template: 'paper', variables: { MOTD: 'Hello', VERSION: '' } },
    });
  });

  it('sends a port as the primary allocation on every address', () => {
    expect(
      newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x', port: ' 25565 ' }),
    ).toEqual({
      server: { name: 'mc', startCommand: 'x', allocations: [{ ip: '0.0.0.0', port: 25565 }] },
    });
  });
});

describe('the node of a new server', () => {
  it('sends the node chosen, none for automatic', () => {
    expect(newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x' })).toEqual({
      server: { name: 'mc', startCommand: 'x' },
    });
    expect(newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x', node: 'eu-1' })).toEqual({
      server: { name: 'mc', startCommand: 'x', node: 'eu-1' },
    });
  });

  it('offers each node with why it would not take a server, or the memory it has left', () => {
    const node = {
      name: 'eu-1',
      maintenance: false,
      health: { status: 'online', checkedAt: '2026-01-01T00:00:00.000Z' },
      allocated: {
        memoryBytes: GIB,
        diskBytes: 0,
        memoryCapacityBytes: 3 * GIB,
        diskCapacityBytes: null,
      },
    } as unknown as Parameters<typeof nodeOptionLabel>[0];
    expect(nodeOptionLabel(node)).toBe('eu-1: online, 2 GiB of memory left');
    expect(nodeOptionLabel({ ...node, maintenance: true })).toBe(
      'eu-1: in maintenance, takes no server',
    );
    expect(
      nodeOptionLabel({
        ...node,
        allocated: { ...node.allocated, memoryCapacityBytes: null },
      }),
    ).toBe('eu-1: online, memory not counted');
  });
});

describe('the limits of a new server', () => {
  const DEFAULTS = { memoryBytes: 2 * GIB, cpuPercent: 150, pids: 512, diskBytes: 10 * GIB };

  it('prefills the defaults in the units shown, empty for none', () => {
    expect(limitsFormFrom(DEFAULTS)).toEqual({
      memoryMiB: '2048',
      cpuPercent: '150',
      pids: '512',
      disk: '10',
      diskUnit: 'GiB',
    });
    expect(
      limitsFormFrom({ memoryBytes: null, cpuPercent: null, pids: 64, diskBytes: 300 * MIB }),
    ).toEqual({ memoryMiB: '', cpuPercent: '', pids: '64', disk: '300', diskUnit: 'MiB' });
  });

  it('sends all four limits converted from their units, an empty one as null', () => {
    const limits = { ...limitsFormFrom(DEFAULTS), memoryMiB: ' 512 ', cpuPercent: '', disk: '1.5' };
    expect(newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x', limits })).toEqual({
      server: {
        name: 'mc',
        startCommand: 'x',
        limits: { memoryBytes: 512 * MIB, cpuPercent: null, pids: 512, diskBytes: 1.5 * GIB },
      },
    });
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: 'mc',
        template: 'paper',
        limits: { ...limits, disk: '', diskUnit: 'MiB', pids: '32' },
      }),
    ).toEqual({
      server: {
        name: 'mc',
        template: 'paper',
        variables: {},
        limits: { memoryBytes: 512 * MIB, cpuPercent: null, pids: 32, diskBytes: null },
      },
    });
  });

  it('sends no limits while the defaults are not in: the API gives them', () => {
    const request = newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x' });
    expect(request).toEqual({ server: { name: 'mc', startCommand: 'x' } });
  });

  it('refuses an empty process limit and a limit that is no number, next to the field', () => {
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: 'mc',
        startCommand: 'x',
        limits: { ...limitsFormFrom(DEFAULTS), pids: '  ', memoryMiB: '12abc' },
      }),
    ).toEqual({
      errors: {
        pids: PIDS_REQUIRED,
        memoryMiB: 'Enter a number, or leave it empty for no limit',
      },
    });
  });

  it("places the API's refusal of a limit next to it, in MiB, and anything else in an alert", () => {
    const refusal = (details: { path: string; message: string }[]) =>
      new ApiError(
        400,
        'VALIDATION_ERROR',
        details.map((d) => d.message).join('; '),
        null,
        details,
      );
    expect(
      limitErrorsFrom(
        refusal([
          { path: 'body/limits/memoryBytes', message: 'must be >= 8388608' },
          { path: 'body/limits/memoryBytes', message: 'must be null' },
          { path: 'body/limits/pids', message: 'must be <= 4194304, or null' },
        ]),
      ),
    ).toEqual({
      fields: { memoryMiB: 'must be >= 8388608 (8 MiB)', pids: 'must be <= 4194304, or null' },
      rest: false,
    });
    expect(
      limitErrorsFrom(
        refusal([
          { path: 'body/name', message: 'must match pattern' },
          { path: 'body/limits/cpuPercent', message: 'must be >= 1, or null' },
        ]),
      ),
    ).toEqual({ fields: { cpuPercent: 'must be >= 1, or null' }, rest: true });
    expect(limitErrorsFrom(new ApiError(409, 'CONFLICT', 'exists'))).toEqual({
      fields: {},
      rest: true,
    });
  });
});

describe('providerLoginHref', () => {
  it('asks the provider to come back to the sign-in page of this origin', () => {
    expect(
      providerLoginHref(
        'http://127.0.0.1:8000/api/auth/oidc/keycloak/login',
        'http://127.0.0.1:8000',
      ),
    ).toBe(
      'http://127.0.0.1:8000/api/auth/oidc/keycloak/login?redirect=http%3A%2F%2F127.0.0.1%3A8000%2Fsign-in',
    );
  });
});

describe('portProblem', () => {
  it('asks for a port only when the template needs one and none is typed', () => {
    expect(portProblem('', false, 41000)).toBeUndefined();
    expect(portProblem(' 30000 ', true, 41000)).toBeUndefined();
    expect(portProblem(' ', true, 41000)).toBe(
      "Enter a port: the template's start-up uses one (41000 is free)",
    );
    expect(portProblem('', true, undefined)).toBe("Enter a port: the template's start-up uses one");
  });
});
