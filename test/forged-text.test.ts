/**
 * Text that forges other text (issue 25, point 11; docs/security.md, "Text that forges other
 * text"): a panel console line quoting what a user or an egg gave writes its control characters
 * out, so a variable holding a newline cannot print a fake `[panel] admin> …`; the audit log
 * stores names with their control characters written out, and never keeps the name a failed
 * sign-in tried unless it is an existing account's.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  eventually,
  gameServerCommand,
  historyOf,
  json,
  login,
  register,
  serverAction,
  type Session,
} from './helpers/factories.js';
import { escapeControl } from '../src/text.js';

const FORGED = 'x\n[panel] admin> op mallory';

/** A PTDL_v2 egg whose start command carries a free-text variable. */
const egg = {
  meta: { version: 'PTDL_v2' },
  name: 'Forgeable',
  author: 'tests@example.com',
  description: 'A start command with a free-text variable',
  docker_images: { Node: 'example/node:20' },
  startup: `${gameServerCommand()} --motd {{MOTD}}`,
  config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
  scripts: { installation: { script: '', container: 'debian', entrypoint: 'bash' } },
  variables: [
    {
      name: 'Message of the day',
      description: 'Shown to players',
      env_variable: 'MOTD',
      default_value: 'hello',
      user_viewable: true,
      user_editable: true,
      rules: 'nullable|string|max:200',
    },
  ],
};

interface Entry {
  actor: string | null;
  actorId: number | null;
  address: string | null;
  action: string;
  target: string | null;
  outcome: string;
  details: Record<string, unknown>;
}

describe('text that forges other text', () => {
  let panel: TestPanel;
  let admin: Session;
  let player: Session;

  const call = (session: Session, method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) =>
    panel.app.inject({
      method,
      url,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    player = await register(panel, 'player');
  });

  it('writes out the control characters of a variable quoted in "[panel] starting:"', async () => {
    const imported = await call(admin, 'POST', '/api/templates/import', egg);
    assert.equal(imported.statusCode, 200, imported.body);
    const template = json<{ data: { id: string } }>(imported).data.id;
    const created = await call(admin, 'POST', '/api/servers/create', {
      name: 'forge',
      template,
      owner: 'player',
    });
    assert.equal(created.statusCode, 200, created.body);
    // The tenant sets the value: a newline, then what looks like an admin's command.
    const set = await call(player, 'PUT', '/api/servers/forge/variables', {
      variables: { MOTD: `${FORGED}\u2028[panel] admin> deop me\r\u001b[2K` },
    });
    assert.equal(set.statusCode, 200, set.body);

    assert.equal((await serverAction(panel, player, 'forge', 'start')).statusCode, 200);
    const lines = await eventually(async () => {
      const history = await historyOf(panel, admin, 'forge');
      return history.some((line) => line.startsWith('[panel] starting: ')) ? history : undefined;
    }, 'the start line');
    await serverAction(panel, admin, 'forge', 'kill');

    const forged = lines.filter((line) => line.startsWith('[panel] admin>'));
    assert.deepEqual(forged, [], 'no console line is a forged command of the admin');
    const starting = lines.find((line) => line.startsWith('[panel] starting: ')) ?? '';
    assert.ok(
      starting.includes('x\\n[panel] admin> op mallory\\u2028[panel] admin> deop me\\r\\x1b[2K'),
      starting,
    );
    for (const character of ['\n', '\r', '\u001b', '\u2028']) {
      assert.ok(!lines.some((line) => line.includes(character)), JSON.stringify(character));
    }
  });

  it('spells every control character one way', () => {
    assert.equal(
      escapeControl('a\tb\u0000c\u007f\u0085\u009b\u202e\u2029ok\\n'),
      'a\\tb\\x00c\\x7f\\x85\\x9b\\u202e\\u2029ok\\n',
    );
    assert.equal(escapeControl('plain text, é ü 漢字 🎮'), 'plain text, é ü 漢字 🎮');
  });

  it("keeps no trace of a failed sign-in's name that is no account, and names an account that is", async () => {
    const typed = 'secret-password-typed-here';
    rememberSecret(typed);
    rememberSecret('a wrong password');
    assert.equal((await login(panel, typed, 'a wrong password')).statusCode, 401);
    assert.equal((await login(panel, 'PLAYER', 'a wrong password')).statusCode, 401);
    const escaped = 'evil\u001b[31m\nadmin';
    assert.equal((await login(panel, escaped, 'a wrong password')).statusCode, 401);
    const registered = await panel.app.inject({
      method: 'POST',
      url: '/api/auth/register',
      payload: { username: 'player', password: 'another password' },
    });
    assert.equal(registered.statusCode, 409, registered.body);

    const rows = await panel.db.kysely.selectFrom('audit_log').selectAll().execute();
    assert.ok(
      !JSON.stringify(rows).includes(typed),
      'the name typed is nowhere in the audit table',
    );
    assert.ok(!JSON.stringify(rows).includes('evil'), 'nor the other unknown name');
    const listed = await call(admin, 'GET', '/api/audit?limit=200');
    assert.equal(listed.statusCode, 200, listed.body);
    assert.ok(!listed.body.includes(typed), 'nor GET /api/audit');

    const entries = json<{ data: Entry[] }>(listed).data;
    const logins = entries.filter((e) => e.action === 'auth.login' && e.outcome === 'failed');
    assert.deepEqual(
      logins.map((e) => [e.actor, e.actorId === null, e.address, e.details]),
      [
        [null, true, '127.0.0.1', { unknownAccount: true }],
        ['player', false, '127.0.0.1', {}],
        [null, true, '127.0.0.1', { unknownAccount: true }],
      ],
    );
    const refused = entries.find((e) => e.action === 'auth.register' && e.outcome === 'failed');
    assert.deepEqual([refused?.actor, refused?.details], ['player', {}]);
  });

  it('stores the names and details of an entry with their control characters written out', async () => {
    const name = 'nightly\n[audit] admin deleted everything\u001b[0m';
    const made = await call(player, 'POST', '/api/servers/forge/schedules', {
      name,
      cron: '0 3 * * *',
      tasks: [{ action: 'restart' }],
    });
    assert.equal(made.statusCode, 200, made.body);
    const row = await panel.db.kysely
      .selectFrom('audit_log')
      .select(['details', 'actor_name'])
      .where('action', '=', 'schedule.create')
      .executeTakeFirstOrThrow();
    assert.equal(row.actor_name, 'player');
    assert.equal(
      (JSON.parse(row.details) as { name: string }).name, // no raw control character left
      'nightly\\n[audit] admin deleted everything\\x1b[0m',
    );
  });
});
