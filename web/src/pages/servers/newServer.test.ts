import { describe, expect, it } from 'vitest';
import { providerLoginHref } from '../sign-in/providerLoginHref';
import { newServerFrom } from './newServer';

describe('newServerFrom', () => {
  it('sends optional fields only when filled in, trimmed', () => {
    expect(
      newServerFrom({
        name: ' mc ',
        displayName: '  ',
        startCommand: ' java -jar s.jar ',
        stopCommand: '',
      }),
    ).toEqual({ name: 'mc', startCommand: 'java -jar s.jar' });
    expect(
      newServerFrom({
        name: 'mc',
        displayName: 'Survival',
        startCommand: 'x',
        stopCommand: 'stop',
      }),
    ).toEqual({ name: 'mc', displayName: 'Survival', startCommand: 'x', stopCommand: 'stop' });
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
