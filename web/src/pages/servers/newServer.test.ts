import { describe, expect, it } from 'vitest';
import { providerLoginHref } from '../sign-in/providerLoginHref';
import { EMPTY_FORM, newServerFrom } from './newServer';

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
    ).toEqual({ name: 'mc', startCommand: 'java -jar s.jar' });
    expect(
      newServerFrom({
        ...EMPTY_FORM,
        name: 'mc',
        displayName: 'Survival',
        startCommand: 'x',
        stopCommand: 'stop',
      }),
    ).toEqual({ name: 'mc', displayName: 'Survival', startCommand: 'x', stopCommand: 'stop' });
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
    ).toEqual({ name: 'mc', template: 'paper', variables: { MOTD: 'Hello', VERSION: '' } });
  });

  it('sends a port as the primary allocation on every address', () => {
    expect(
      newServerFrom({ ...EMPTY_FORM, name: 'mc', startCommand: 'x', port: ' 25565 ' }),
    ).toEqual({ name: 'mc', startCommand: 'x', allocations: [{ ip: '0.0.0.0', port: 25565 }] });
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
