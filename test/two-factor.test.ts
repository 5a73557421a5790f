/**
 * Two-factor sign-in through the HTTP surface, with codes computed here from the secret the panel
 * gave (otpauth) and the panel's clock in the test's hands: enrolment, the two-step sign-in, each
 * code good once, recovery codes, the limits on a challenge, throttling, turning it off, the roles
 * an admin requires it of, and what the database keeps.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  json,
  register,
  type Session,
} from './helpers/factories.js';

describe('two-factor sign-in', () => {
  let panel: TestPanel;
  let admin: Session;
  let alice: Session;
  let clock = Date.parse('2031-05-01T12:00:00Z');
  let totp: TOTP;
  let recovery: string[] = [];

  const post = (url: string, payload: object, session?: Session) =>
    panel.app.inject({
      method: 'POST',
      url,
      payload,
      ...(session ? { headers: session.headers } : {}),
    });
  const code = () => totp.generate({ timestamp: clock });
  /** The next 30-second step: a new code. */
  const tick = () => {
    clock += 30_000;
  };
  const login = async (username = 'alice') => {
    const response = await post('/api/auth/login', { username, password: PASSWORD });
    assert.equal(response.statusCode, 200, response.body);
    return json<{ challenge?: string; access_token?: string; two_factor_required?: boolean }>(
      response,
    );
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      { LOGIN_MAX_FAILURES_PER_ACCOUNT: '8' },
      { now: () => new Date(clock) },
    );
    admin = await register(panel, 'admin');
    alice = await register(panel, 'alice');
  });

  it('enrols with the password, a QR code and a confirming code', async () => {
    assertError(
      await post('/api/profile/2fa/setup', { password: 'wrong password' }, alice),
      403,
      'WRONG_PASSWORD',
    );
    assertError(await post('/api/profile/2fa/enable', { code: '123456' }, alice), 409, 'CONFLICT');
    const setup = await post('/api/profile/2fa/setup', { password: PASSWORD }, alice);
    assert.equal(setup.statusCode, 200, setup.body);
    const enrolment = json<{ data: { secret: string; otpauthUrl: string; qrSvg: string } }>(
      setup,
    ).data;
    assert.match(enrolment.otpauthUrl, /^otpauth:\/\/totp\/Game%20panel:alice\?/);
    assert.match(enrolment.qrSvg, /^<svg /);
    totp = new TOTP({
      issuer: 'Game panel',
      label: 'alice',
      secret: Secret.fromBase32(enrolment.secret),
    });

    const wrong = String((Number(code()) + 1) % 1_000_000).padStart(6, '0');
    assertError(
      await post('/api/profile/2fa/enable', { code: wrong }, alice),
      401,
      'INVALID_CREDENTIALS',
    );
    const enabled = await post('/api/profile/2fa/enable', { code: code() }, alice);
    assert.equal(enabled.statusCode, 200, enabled.body);
    recovery = json<{ data: { recoveryCodes: string[] } }>(enabled).data.recoveryCodes;
    assert.equal(recovery.length, 10);
    assert.equal(new Set(recovery).size, 10);
    for (const one of recovery) assert.match(one, /^[a-z2-9]{5}-[a-z2-9]{5}$/);

    const status = json<{ data: { enabled: boolean; recoveryCodesLeft: number } }>(
      await panel.app.inject({ url: '/api/profile/2fa', headers: alice.headers }),
    ).data;
    assert.deepEqual([status.enabled, status.recoveryCodesLeft], [true, 10]);
    assertError(await post('/api/profile/2fa/setup', { password: PASSWORD }, alice), 409);

    // The database keeps neither the secret nor the codes as they are.
    const row = await panel.db.kysely
      .selectFrom('users')
      .select(['totp_secret', 'totp_pending_secret'])
      .where('username', '=', 'alice')
      .executeTakeFirstOrThrow();
    assert.ok(row.totp_secret !== null && !row.totp_secret.includes(enrolment.secret));
    assert.equal(row.totp_pending_secret, null);
    const hashes = await panel.db.kysely.selectFrom('recovery_codes').select('code_hash').execute();
    assert.equal(hashes.length, 10);
    for (const { code_hash } of hashes) {
      assert.ok(!recovery.some((one) => code_hash.includes(one.replace('-', ''))));
    }
  });

  it('asks for a code after the password, and takes each code once', async () => {
    tick();
    const first = await login();
    assert.equal(first.two_factor_required, true);
    assert.equal(first.access_token, undefined);
    assert.ok(first.challenge);

    const signedIn = await post('/api/auth/login/2fa', {
      challenge: first.challenge,
      code: code(),
    });
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    const token = json<{ access_token: string }>(signedIn).access_token;
    const me = json<{ twoFactor: { enabled: boolean; mustEnrol: boolean } }>(
      await panel.app.inject({ url: '/api/auth/me', headers: bearer(token) }),
    );
    assert.deepEqual(me.twoFactor, { enabled: true, mustEnrol: false });
    // The challenge is spent.
    assertError(
      await post('/api/auth/login/2fa', { challenge: first.challenge, code: code() }),
      401,
      'UNAUTHORIZED',
    );
    // The same code, with a new challenge, within the same 30 s: refused.
    const second = await login();
    assertError(
      await post('/api/auth/login/2fa', { challenge: second.challenge, code: code() }),
      401,
      'INVALID_CREDENTIALS',
    );
    tick();
    const again = await post('/api/auth/login/2fa', { challenge: second.challenge, code: code() });
    assert.equal(again.statusCode, 200, again.body);

    // A recovery code, typed in capitals without its hyphen: once.
    const third = await login();
    const typed = recovery[0]!.replace('-', '').toUpperCase();
    const recovered = await post('/api/auth/login/2fa', {
      challenge: third.challenge,
      code: typed,
    });
    assert.equal(recovered.statusCode, 200, recovered.body);
    const fourth = await login();
    assertError(
      await post('/api/auth/login/2fa', { challenge: fourth.challenge, code: recovery[0] }),
      401,
      'INVALID_CREDENTIALS',
    );
    const left = json<{ data: { recoveryCodesLeft: number } }>(
      await panel.app.inject({ url: '/api/profile/2fa', headers: alice.headers }),
    ).data.recoveryCodesLeft;
    assert.equal(left, 9);
  });

  it('ends a challenge after five wrong codes, and after five minutes', async () => {
    tick();
    const { challenge } = await login();
    for (let i = 0; i < 5; i++) {
      assertError(
        await post('/api/auth/login/2fa', { challenge, code: '000000' }),
        401,
        'INVALID_CREDENTIALS',
      );
    }
    assertError(
      await post('/api/auth/login/2fa', { challenge, code: code() }),
      401,
      'UNAUTHORIZED',
    );

    const late = await login();
    clock += 5 * 60_000;
    assertError(
      await post('/api/auth/login/2fa', { challenge: late.challenge, code: code() }),
      401,
      'UNAUTHORIZED',
    );
    assertError(
      await post('/api/auth/login/2fa', { challenge: 'made-up', code: code() }),
      401,
      'UNAUTHORIZED',
    );
  });

  it('throttles wrong codes from an address like wrong passwords', async () => {
    // Five wrong codes were counted above; three more reach the limit of eight.
    tick();
    let refused = false;
    for (let i = 0; i < 6 && !refused; i++) {
      const { challenge } = await login();
      const response = await post('/api/auth/login/2fa', { challenge, code: '999999' });
      if (response.statusCode === 429) refused = true;
      else assertError(response, 401, 'INVALID_CREDENTIALS');
    }
    assert.ok(refused, 'the address was never refused');
    // The throttle's window ends; the right code works again.
    clock += 15 * 60_000 + 1;
    const { challenge } = await login();
    const response = await post('/api/auth/login/2fa', { challenge, code: code() });
    assert.equal(response.statusCode, 200, response.body);
  });

  it('lets admins require it of a role: nothing but enrolling until it is on', async () => {
    assertError(
      await panel.app.inject({
        method: 'PUT',
        url: '/api/admin/two-factor',
        headers: alice.headers,
        payload: { requiredFor: [] },
      }),
      403,
      'FORBIDDEN',
    );
    const bob = await register(panel, 'bob');
    const set = await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/two-factor',
      headers: admin.headers,
      payload: { requiredFor: ['user'] },
    });
    assert.equal(set.statusCode, 200, set.body);
    assertError(
      await panel.app.inject({ url: '/api/servers', headers: bob.headers }),
      403,
      'TWO_FACTOR_REQUIRED',
    );
    const me = json<{ twoFactor: { mustEnrol: boolean } }>(
      await panel.app.inject({ url: '/api/auth/me', headers: bob.headers }),
    );
    assert.equal(me.twoFactor.mustEnrol, true);
    const setup = await post('/api/profile/2fa/setup', { password: PASSWORD }, bob);
    assert.equal(setup.statusCode, 200, setup.body);
    const secret = json<{ data: { secret: string } }>(setup).data.secret;
    const bobs = new TOTP({
      issuer: 'Game panel',
      label: 'bob',
      secret: Secret.fromBase32(secret),
    });
    const enabled = await post(
      '/api/profile/2fa/enable',
      { code: bobs.generate({ timestamp: clock }) },
      bob,
    );
    assert.equal(enabled.statusCode, 200, enabled.body);
    assert.equal(
      (await panel.app.inject({ url: '/api/servers', headers: bob.headers })).statusCode,
      200,
    );
    // Admins are not of the role: untouched.
    assert.equal(
      (await panel.app.inject({ url: '/api/servers', headers: admin.headers })).statusCode,
      200,
    );
    await panel.app.inject({
      method: 'PUT',
      url: '/api/admin/two-factor',
      headers: admin.headers,
      payload: { requiredFor: [] },
    });
  });

  it('turns off with the password and a code', async () => {
    tick();
    assertError(
      await post('/api/profile/2fa/disable', { password: 'wrong password', code: code() }, alice),
      403,
      'WRONG_PASSWORD',
    );
    assertError(
      await post('/api/profile/2fa/disable', { password: PASSWORD, code: '000000' }, alice),
      401,
      'INVALID_CREDENTIALS',
    );
    const off = await post('/api/profile/2fa/disable', { password: PASSWORD, code: code() }, alice);
    assert.equal(off.statusCode, 200, off.body);
    const plain = await login();
    assert.ok(plain.access_token);
    assertError(
      await post('/api/profile/2fa/disable', { password: PASSWORD, code: code() }, alice),
      409,
      'CONFLICT',
    );
    const rows = await panel.db.kysely.selectFrom('recovery_codes').select('id').execute();
    // Bob's ten remain; Alice's are gone.
    assert.equal(rows.length, 10);
  });
});
