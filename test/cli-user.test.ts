/**
 * `game-panel user …` as an operator runs it: a separate process on the panel's database (SQLite,
 * or PostgreSQL when TEST_DATABASE_URL is set), first with no panel running, then while one runs
 * on the same database. A password set on the command line revokes the user's tokens in the
 * running panel (its next request is refused) and closes their console sockets; a sole admin who
 * lost their password or their second factor gets back in; every change is audited `via: cli`.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { userInfo } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import WebSocket from 'ws';
import {
  rememberSecret,
  startPanel,
  suiteScope,
  testEnvironment,
  type TestPanel,
} from './helpers/app.js';
import { runCliProcess, type CliResult } from './helpers/cli.js';
import { bearer, createServer, json, login, type Session } from './helpers/factories.js';

const CAROLS_PASSWORD = 'carols own password';
const NEW_PASSWORD = 'typed on the host';

/** The password a command printed, once. */
function printedPassword(result: CliResult): string {
  const match = /shown only this once: (\S+)\n/.exec(result.stdout);
  assert.ok(match?.[1], result.stdout);
  rememberSecret(match[1]);
  return match[1];
}

describe('the user commands', () => {
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let panel: TestPanel | undefined;
  let bossPassword = '';
  const outputs: string[] = [];
  let clock = Date.parse('2031-07-01T12:00:00Z');

  const cli = async (args: string[], stdin = ''): Promise<CliResult> => {
    const result = await runCliProcess(['user', ...args], env, stdin);
    outputs.push(result.stdout, result.stderr);
    return result;
  };
  const running = (): TestPanel => {
    assert.ok(panel, 'the panel runs');
    return panel;
  };
  const signIn = async (username: string, password: string): Promise<Session> => {
    const response = await login(running(), username, password);
    assert.equal(response.statusCode, 200, response.body);
    const body = json<{ access_token: string; role: string }>(response);
    return {
      username,
      token: body.access_token,
      role: body.role,
      headers: bearer(body.access_token),
    };
  };

  before(async () => {
    ({ env, cleanup } = await testEnvironment({ REGISTRATION: 'closed' }));
    rememberSecret(CAROLS_PASSWORD);
    rememberSecret(NEW_PASSWORD);
  });
  const suite = suiteScope();
  after(() => cleanup());

  it('makes the first admin with no panel running, and lists accounts', async () => {
    const empty = await cli(['list']);
    assert.equal(empty.status, 0, empty.stderr);
    assert.match(empty.stdout, /No accounts yet/);

    const made = await cli(['create', 'boss', '--admin']);
    assert.equal(made.status, 0, made.stderr);
    assert.match(made.stdout, /^Created boss \(admin\)\.\n/);
    bossPassword = printedPassword(made);
    assert.ok(bossPassword.length >= 20);

    const carol = await cli(
      ['create', 'Carol', '--role', 'support', '--password-stdin'],
      `${CAROLS_PASSWORD}\n`,
    );
    assert.equal(carol.status, 0, carol.stderr);
    assert.equal(carol.stdout, 'Created Carol (support).\n');

    const listed = await cli(['list']);
    assert.equal(listed.status, 0, listed.stderr);
    const lines = listed.stdout.trimEnd().split('\n');
    assert.match(lines[0] ?? '', /^NAME\s+ROLE\s+2FA\s+SIGN-IN\s+LAST SIGN-IN$/);
    assert.match(lines[1] ?? '', /^boss\s+admin\s+off\s+password\s+never$/);
    assert.match(lines[2] ?? '', /^Carol\s+support\s+off\s+password\s+never$/);
  });

  it('applies the rules of the API: names, passwords, roles, the last admin', async () => {
    const cases: [string[], string, number, RegExp][] = [
      [['create', 'carol'], '', 1, /taken/],
      [['create', 'a b'], '', 1, /username may hold only/],
      [['create', 'dave', '--password-stdin'], 'short\n', 1, /password must be at least 6/],
      [['create', 'dave', '--admin', '--role', 'user'], '', 2, /not both/],
      [['create', 'dave', '--role', 'owner'], '', 2, /Unknown role "owner"/],
      [['role', 'boss', 'user'], '', 1, /last admin/],
      [['password', 'nobody'], '', 1, /not found/],
      [['2fa-off', 'boss'], '', 1, /not on for boss/],
      [['frobnicate'], '', 2, /Unknown user command/],
    ];
    for (const [args, stdin, status, message] of cases) {
      const result = await cli(args, stdin);
      assert.equal(result.status, status, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(' '));
      assert.equal(result.stdout, '', args.join(' '));
    }
    const listed = await cli(['list']);
    assert.doesNotMatch(listed.stdout, /dave/);
  });

  it('works while the panel runs: a new password revokes tokens and closes consoles', async () => {
    panel = await startPanel(
      suite,
      {
        REGISTRATION: 'closed',
        // The panel's clock is years ahead of the command line's: nothing is pruned as old.
        AUDIT_RETENTION_DAYS: '0',
        DATA_DIR: env.DATA_DIR ?? '',
        ...(env.DATABASE_URL ? { DATABASE_URL: env.DATABASE_URL } : {}),
      },
      { consoleLimits: { recheckMs: 100 }, now: () => new Date(clock) },
    );
    const boss = await signIn('boss', bossPassword);
    assert.equal(boss.role, 'admin');
    await createServer(panel, boss, 'watched');
    const base = await panel.listen();
    const url = new URL('/ws/servers/watched/console', base.replace(/^http/, 'ws'));
    const socket = new WebSocket(url, { headers: boss.headers });
    socket.on('error', () => undefined);
    await once(socket, 'open');
    const closed = once(socket, 'close') as Promise<[number, Buffer]>;

    // The sole admin lost their password: the operator sets one on the host.
    const reset = await cli(['password', 'BOSS', '--password-stdin'], `${NEW_PASSWORD}\n`);
    assert.equal(reset.status, 0, reset.stderr);
    assert.equal(
      reset.stdout,
      'Password of boss set; their sessions and 0 API keys were revoked.\n',
    );
    const me = await panel.app.inject({ url: '/api/auth/me', headers: boss.headers });
    assert.equal(me.statusCode, 401, 'the running panel refuses the old token');
    const [code] = await Promise.race([
      closed,
      new Promise<never>((_, reject) =>
        setTimeout(() => {
          reject(new Error('the console socket stayed open'));
        }, 10_000),
      ),
    ]);
    assert.equal(code, 4401);
    assert.equal((await login(panel, 'boss', bossPassword)).statusCode, 401);
    const again = await signIn('boss', NEW_PASSWORD);

    // A generated one, printed once.
    const generated = await cli(['password', 'Carol']);
    assert.equal(generated.status, 0, generated.stderr);
    const carols = printedPassword(generated);
    assert.equal((await login(panel, 'Carol', CAROLS_PASSWORD)).statusCode, 401);
    await signIn('carol', carols);

    // A role changed on the host counts at the next request.
    const demoted = await cli(['role', 'carol', 'banned']);
    assert.equal(demoted.status, 0, demoted.stderr);
    assert.equal(demoted.stdout, 'Carol is now banned.\n');
    const list = await panel.app.inject({ url: '/api/users', headers: again.headers });
    const users = json<{ data: { username: string; role: string }[] }>(list).data;
    assert.equal(users.find((user) => user.username === 'Carol')?.role, 'banned');
  });

  it('turns a lost second factor off, so the sole admin signs in with the password', async () => {
    const live = running();
    const boss = await signIn('boss', NEW_PASSWORD);
    const setup = await live.app.inject({
      method: 'POST',
      url: '/api/profile/2fa/setup',
      headers: boss.headers,
      payload: { password: NEW_PASSWORD },
    });
    assert.equal(setup.statusCode, 200, setup.body);
    const totp = new TOTP({
      issuer: 'Game panel',
      label: 'boss',
      secret: Secret.fromBase32(json<{ data: { secret: string } }>(setup).data.secret),
    });
    const enabled = await live.app.inject({
      method: 'POST',
      url: '/api/profile/2fa/enable',
      headers: boss.headers,
      payload: { code: totp.generate({ timestamp: clock }) },
    });
    assert.equal(enabled.statusCode, 200, enabled.body);
    clock += 60_000;
    const challenged = await live.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { username: 'boss', password: NEW_PASSWORD },
    });
    assert.equal(json<{ two_factor_required?: boolean }>(challenged).two_factor_required, true);
    const listed = await cli(['list']);
    assert.match(listed.stdout, /\nboss\s+admin\s+on\s+password\s+20/);

    const off = await cli(['2fa-off', 'boss']);
    assert.equal(off.status, 0, off.stderr);
    assert.match(off.stdout, /Two-factor sign-in of boss is off/);
    const signedIn = await login(live, 'boss', NEW_PASSWORD);
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(typeof json<{ access_token?: string }>(signedIn).access_token, 'string');
  });

  it('audits every change via cli, naming the system account, never a password', async () => {
    const boss = await signIn('boss', NEW_PASSWORD);
    const response = await running().app.inject({
      url: '/api/audit?via=cli&limit=200',
      headers: boss.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    const entries = json<{
      data: {
        actor: string | null;
        actorId: number | null;
        via: string;
        action: string;
        target: string | null;
        address: string | null;
        details: Record<string, unknown>;
      }[];
    }>(response).data;
    assert.deepEqual(entries.map((entry) => [entry.action, entry.target]).reverse(), [
      ['user.create', 'boss'],
      ['user.create', 'Carol'],
      ['user.password', 'boss'],
      ['user.password', 'Carol'],
      ['user.role', 'Carol'],
      ['user.two-factor-off', 'boss'],
    ]);
    for (const entry of entries) {
      assert.equal(entry.via, 'cli');
      assert.equal(entry.actor, userInfo().username);
      assert.equal(entry.actorId, null);
      assert.equal(entry.address, null);
    }
    assert.deepEqual(entries.at(-1)?.details, {
      username: 'boss',
      role: 'admin',
      generatedPassword: true,
    });
    const text = JSON.stringify(entries);
    for (const secret of [bossPassword, NEW_PASSWORD, CAROLS_PASSWORD]) {
      assert.ok(!text.includes(secret), 'a password is in the audit log');
    }
    // Passwords given on standard input were never printed.
    const printed = outputs.join('');
    assert.ok(!printed.includes(NEW_PASSWORD) && !printed.includes(CAROLS_PASSWORD));
  });
});
