import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  FIRST_DELAY_MS,
  LoginThrottle,
  MAX_DELAY_MS,
  type LoginThrottleOptions,
} from '../src/modules/auth/login-throttle.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { PASSWORD, assertError, json, register, type Session } from './helpers/factories.js';

const WINDOW_SECONDS = 900;

/** A throttle on a clock the test moves, whose waits are recorded rather than waited. */
function throttle(options: Partial<LoginThrottleOptions> = {}) {
  let now = Date.parse('2030-01-01T00:00:00Z');
  const waits: number[] = [];
  const instance = new LoginThrottle({
    maxFailuresPerAccount: 3,
    maxFailuresPerAddress: 8,
    slowDownAfterAccountFailures: 6,
    windowSeconds: WINDOW_SECONDS,
    now: () => new Date(now),
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
    ...options,
  });
  return {
    throttle: instance,
    waits,
    advance(seconds: number) {
      now += seconds * 1000;
    },
    /** A password check of `account` from `address`; `right` says whether the password is. */
    attempt(account: string, address: string, right: boolean) {
      return instance.attempt(account, address, () => Promise.resolve(right ? { account } : null));
    },
  };
}

/** A promise the test settles. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

describe('LoginThrottle', () => {
  it('refuses an (account, address) pair past its failures until the window ends, and no other address', async () => {
    const t = throttle();
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(t.throttle.decide('admin', 'A'), { kind: 'proceed', delayMs: 0 });
      assert.equal((await t.attempt('admin', 'A', false)).kind, 'wrong');
    }
    t.advance(100);
    assert.deepEqual(t.throttle.decide('admin', 'A'), {
      kind: 'refuse',
      reason: 'pair',
      retryAfterSeconds: WINDOW_SECONDS - 100,
    });
    // Refused without checking: even the right password.
    assert.deepEqual(await t.attempt('admin', 'A', true), {
      kind: 'refused',
      retryAfterSeconds: WINDOW_SECONDS - 100,
    });
    // Another account from A, and the same account from B, are not affected.
    assert.deepEqual(t.throttle.decide('other', 'A'), { kind: 'proceed', delayMs: 0 });
    assert.deepEqual(t.throttle.decide('admin', 'B'), { kind: 'proceed', delayMs: 0 });
    assert.equal((await t.attempt('admin', 'B', true)).kind, 'right');

    t.advance(WINDOW_SECONDS - 100);
    assert.deepEqual(t.throttle.decide('admin', 'A'), { kind: 'proceed', delayMs: 0 });
  });

  it('refuses an address past its failures across accounts, whatever the account', async () => {
    const t = throttle();
    for (let i = 0; i < 8; i++) await t.attempt(`victim${i % 4}`, 'A', false);
    assert.deepEqual(t.throttle.decide('never-tried', 'A'), {
      kind: 'refuse',
      reason: 'address',
      retryAfterSeconds: WINDOW_SECONDS,
    });
    assert.equal((await t.attempt('never-tried', 'A', true)).kind, 'refused');
    assert.deepEqual(t.throttle.decide('never-tried', 'B'), { kind: 'proceed', delayMs: 0 });
  });

  it('slows an account failing from many addresses, with a growing capped wait, and never refuses it', async () => {
    const t = throttle();
    // One failure each from many addresses: no pair and no address reaches its limit.
    const fail = (i: number) => t.attempt('admin', `10.0.0.${i}`, false);
    for (let i = 0; i < 6; i++) {
      assert.deepEqual(t.throttle.decide('admin', 'clean'), { kind: 'proceed', delayMs: 0 });
      await fail(i);
    }
    assert.deepEqual(t.waits, []);
    const expected = [FIRST_DELAY_MS, 2 * FIRST_DELAY_MS, 4 * FIRST_DELAY_MS, 8 * FIRST_DELAY_MS];
    for (const [i, delayMs] of expected.entries()) {
      assert.deepEqual(t.throttle.decide('admin', 'clean'), { kind: 'proceed', delayMs });
      await fail(100 + i);
    }
    for (let i = 0; i < 50; i++) await fail(200 + i);
    assert.deepEqual(t.throttle.decide('admin', 'clean'), {
      kind: 'proceed',
      delayMs: MAX_DELAY_MS,
    });
    // Each slowed attempt waited its delay before its password was checked.
    assert.deepEqual(t.waits.slice(0, 4), expected);
    // Other accounts are not slowed, and the window's end lifts the slow-down.
    assert.deepEqual(t.throttle.decide('someone-else', 'clean'), { kind: 'proceed', delayMs: 0 });
    t.advance(WINDOW_SECONDS);
    assert.deepEqual(t.throttle.decide('admin', 'clean'), { kind: 'proceed', delayMs: 0 });
  });

  it('lets the right password in from a clean address once the pair and account limits are exceeded', async () => {
    const t = throttle();
    for (const address of ['A', 'C', 'D']) {
      for (let i = 0; i < 3; i++) await t.attempt('admin', address, false);
    }
    const refused = { kind: 'refuse', reason: 'pair', retryAfterSeconds: WINDOW_SECONDS };
    assert.deepEqual(t.throttle.decide('admin', 'A'), refused);
    // Nine failures, past the slow-down at six: slowed by the fourth wait, never refused.
    const slowed = { kind: 'proceed', delayMs: 8 * FIRST_DELAY_MS };
    assert.deepEqual(t.throttle.decide('admin', 'B'), slowed);

    const waited = t.waits.length;
    assert.deepEqual(await t.attempt('admin', 'B', true), {
      kind: 'right',
      value: { account: 'admin' },
    });
    assert.deepEqual(t.waits.slice(waited), [slowed.delayMs]);
    // B's success clears nothing of A's, nor the account's slow-down.
    assert.deepEqual(t.throttle.decide('admin', 'A'), refused);
    assert.deepEqual(t.throttle.decide('admin', 'E'), slowed);
  });

  it('waits as long for a right password as for a wrong one', async () => {
    const t = throttle({ slowDownAfterAccountFailures: 1 });
    await t.attempt('admin', 'A', false);
    const before = t.throttle.decide('admin', 'B');
    await t.attempt('admin', 'B', true);
    await t.attempt('admin', 'C', false);
    assert.deepEqual(t.waits, [FIRST_DELAY_MS, FIRST_DELAY_MS]);
    assert.deepEqual(before, { kind: 'proceed', delayMs: FIRST_DELAY_MS });
  });

  it("clears a pair's failures on a right password, but not its address's or its account's", async () => {
    const t = throttle({ maxFailuresPerAddress: 5, slowDownAfterAccountFailures: 4 });
    for (const right of [false, false, true, false, false]) await t.attempt('mine', 'A', right);
    // Two failures since the right password: the pair is not refused, but the account counts four.
    assert.deepEqual(t.throttle.decide('mine', 'A'), { kind: 'proceed', delayMs: FIRST_DELAY_MS });
    // The address counts four as well: one more failure anywhere and it is refused.
    await t.attempt('other', 'A', false);
    assert.deepEqual(t.throttle.decide('mine', 'A'), {
      kind: 'refuse',
      reason: 'address',
      retryAfterSeconds: WINDOW_SECONDS,
    });
  });

  it('counts attempts still being checked, so a concurrent burst cannot pass a limit', async () => {
    const t = throttle();
    const checks = [deferred<null>(), deferred<null>(), deferred<null>()];
    const running = checks.map((check) => t.throttle.attempt('admin', 'A', () => check.promise));
    assert.deepEqual(t.throttle.decide('admin', 'A'), {
      kind: 'refuse',
      reason: 'pair',
      retryAfterSeconds: 1,
    });
    assert.deepEqual(t.throttle.decide('admin', 'B'), { kind: 'proceed', delayMs: 0 });
    for (const check of checks) check.resolve(null);
    assert.deepEqual(
      (await Promise.all(running)).map((outcome) => outcome.kind),
      ['wrong', 'wrong', 'wrong'],
    );
    assert.deepEqual(t.throttle.decide('admin', 'A'), {
      kind: 'refuse',
      reason: 'pair',
      retryAfterSeconds: WINDOW_SECONDS,
    });
  });

  it('counts nothing for a check that throws', async () => {
    const t = throttle({ maxFailuresPerAccount: 1 });
    await assert.rejects(
      t.throttle.attempt('admin', 'A', () => Promise.reject(new Error('database down'))),
      /database down/,
    );
    assert.deepEqual(t.throttle.decide('admin', 'A'), { kind: 'proceed', delayMs: 0 });
  });

  it('bounds the attempts waiting at once, refusing only addresses that have failed', async () => {
    const sleeping: (() => void)[] = [];
    const t = throttle({
      slowDownAfterAccountFailures: 1,
      maxConcurrentDelays: 2,
      sleep: () => new Promise<void>((resolve) => sleeping.push(resolve)),
    });
    await t.attempt('admin', 'failed-before', false);
    const waiting = [t.attempt('admin', 'W1', false), t.attempt('admin', 'W2', false)];
    assert.equal(sleeping.length, 2);
    const busy = t.throttle.decide('admin', 'failed-before');
    assert.deepEqual(busy, { kind: 'refuse', reason: 'busy', retryAfterSeconds: 1 });
    // A clean address still only waits.
    const clean = t.attempt('admin', 'clean', true);
    assert.equal(sleeping.length, 3);
    for (const wake of sleeping) wake();
    assert.equal((await clean).kind, 'right');
    await Promise.all(waiting);
    // Once the waiting attempts are done, the failing address may wait again.
    assert.equal(t.throttle.decide('admin', 'failed-before').kind, 'proceed');
  });

  it('holds at most maxKeys counts per map, forgetting the oldest window first', async () => {
    const t = throttle({ maxFailuresPerAddress: 1, maxKeys: 3 });
    for (const address of ['A', 'B', 'C', 'D', 'E']) {
      await t.attempt(`account-${address}`, address, false);
      t.advance(1);
    }
    const kinds = ['A', 'B', 'C', 'D', 'E'].map((address) => t.throttle.decide('x', address).kind);
    assert.deepEqual(kinds, ['proceed', 'proceed', 'refuse', 'refuse', 'refuse']);
  });
});

describe('login throttling over HTTP', () => {
  let panel: TestPanel;
  let admin: Session;
  const waits: number[] = [];
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(
      suite,
      {
        LOGIN_MAX_FAILURES_PER_ACCOUNT: '3',
        LOGIN_MAX_FAILURES_PER_ADDRESS: '6',
        LOGIN_SLOW_DOWN_AFTER_FAILURES: '5',
      },
      {
        sleep: (ms) => {
          waits.push(ms);
          return Promise.resolve();
        },
      },
    );
    admin = await register(panel, 'admin');
  });

  const login = (remoteAddress: string, username: string, password: string) =>
    panel.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      remoteAddress,
      payload: { username, password },
    });

  it("cannot lock the admin out: an attacker's failures refuse the attacker, not the admin elsewhere", async () => {
    // One address, then two more: each pair past its limit, the account past its slow-down.
    for (const attacker of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
      for (let i = 0; i < 3; i++) assertError(await login(attacker, 'admin', 'guess'), 401);
      const refused = await login(attacker, 'admin', PASSWORD);
      assertError(refused, 429, 'RATE_LIMITED');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    }
    const waitsBefore = waits.length;
    const response = await login('192.0.2.200', 'admin', PASSWORD);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(json(response).username, 'admin');
    assert.equal(waits.length, waitsBefore + 1, 'the right password was slowed, not refused');
    assert.ok(waits.at(-1)! > 0);
    // The attacker stays refused, without being made to wait.
    assertError(await login('192.0.2.1', 'admin', 'guess'), 429, 'RATE_LIMITED');
    assert.equal(waits.length, waitsBefore + 1);
  });

  it('still refuses an address past its failures across accounts', async () => {
    await register(panel, 'guarded');
    const address = '198.51.100.50';
    for (let i = 0; i < 6; i++) assertError(await login(address, `nobody${i}`, 'guess'), 401);
    assertError(await login(address, 'guarded', PASSWORD), 429, 'RATE_LIMITED');
    assert.equal((await login('198.51.100.51', 'guarded', PASSWORD)).statusCode, 200);
  });

  it('lets the owner change their password while a stolen token is refused elsewhere', async () => {
    const owner = await register(panel, 'owner');
    const change = (remoteAddress: string, oldPassword: string, newPassword: string) =>
      panel.app.inject({
        method: 'PUT',
        url: '/api/profile/password',
        remoteAddress,
        headers: owner.headers,
        payload: { old_password: oldPassword, new_password: newPassword },
      });
    const thief = '203.0.113.66';
    for (let i = 0; i < 3; i++) {
      assertError(await change(thief, `guess ${i}`, 'stolen!'), 403, 'WRONG_PASSWORD');
    }
    assertError(await change(thief, PASSWORD, 'stolen!'), 429, 'RATE_LIMITED');
    const renewed = 'renewed password';
    rememberSecret(renewed);
    const changed = await change('203.0.113.67', PASSWORD, renewed);
    assert.equal(changed.statusCode, 200, changed.body);
    rememberSecret(json<{ data: { access_token: string } }>(changed).data.access_token);
  });

  it('counts the address Fastify trusts: X-Forwarded-For only behind TRUST_PROXY', async (t) => {
    const attempt = (forwardedFor: string, password: string) =>
      panel.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '198.51.100.90',
        headers: { 'x-forwarded-for': forwardedFor },
        payload: { username: admin.username, password },
      });
    // Without TRUST_PROXY a client cannot dodge its limit by inventing addresses.
    for (let i = 0; i < 3; i++) assertError(await attempt(`10.9.0.${i}`, 'guess'), 401);
    assertError(await attempt('10.9.0.99', PASSWORD), 429, 'RATE_LIMITED');

    const proxied = await startPanel(t, {
      TRUST_PROXY: '127.0.0.1',
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '2',
    });
    await register(proxied, 'boss');
    const via = (client: string, password: string) =>
      proxied.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': client },
        payload: { username: 'boss', password },
      });
    for (let i = 0; i < 2; i++) assertError(await via('203.0.113.5', 'guess'), 401);
    assertError(await via('203.0.113.5', PASSWORD), 429, 'RATE_LIMITED');
    assert.equal((await via('203.0.113.6', PASSWORD)).statusCode, 200);
  });
});
