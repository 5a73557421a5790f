/**
 * How a server's end is told: an exit racing its own start is never lost (it used to leave the
 * server "running" forever, and stop, delete and shutdown hanging), a clean exit after a typed
 * command is a stop, not a crash, the exit code is shown, and a failure while recording an exit
 * is logged without taking the panel down.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { processIdentity } from '../src/host/runtime/process/proc.js';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  createServer,
  eventually,
  historyOf,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

describe('an exit that races the start', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    // Identifying the process takes 300 ms: the server has long exited when the start goes on.
    panel = await startPanel(
      suite,
      {},
      {
        processRuntime: {
          identityOf: async (pid) => {
            await sleep(300);
            return processIdentity(pid);
          },
        },
      },
    );
    admin = await register(panel, 'admin');
  });

  it('ends crashed, with its output and exit code, and stop and delete still finish', async () => {
    await createServer(panel, admin, 'quick', { startCommand: "sh -c 'echo hello; exit 3'" });
    const started = await serverAction(panel, admin, 'quick', 'start');
    assert.equal(started.statusCode, 200, started.body);
    const ended = await eventually(async () => {
      const now = await stats(panel, admin, 'quick');
      return now.status === 'crashed' ? now : undefined;
    }, 'the exit to be seen');
    assert.equal(ended.pid, null);
    assert.equal(ended.lastExit?.code, 3);
    const lines = await historyOf(panel, admin, 'quick');
    assert.ok(lines.includes('hello'), lines.join(' | '));
    assert.ok(lines.includes('[panel] the server exited unexpectedly (code 3)'), lines.join(' | '));

    const stopped = await serverAction(panel, admin, 'quick', 'stop');
    assert.equal(stopped.statusCode, 409, stopped.body);
    const deleted = await panel.app.inject({
      method: 'DELETE',
      url: '/api/servers/quick',
      headers: admin.headers,
    });
    assert.equal(deleted.statusCode, 200, deleted.body);
  });

  it('lets the panel shut down', async () => {
    await createServer(panel, admin, 'quicker', { startCommand: 'true' });
    assert.equal((await serverAction(panel, admin, 'quicker', 'start')).statusCode, 200);
    await eventually(
      async () => ((await stats(panel, admin, 'quicker')).status === 'crashed' ? true : undefined),
      'the exit to be seen',
    );
  });
});

describe('a clean exit after a command', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  // `quit` typed into OpenTTD ends it with code 0: that is a stop.
  const quitter = `sh -c 'echo ready; read line; echo "bye after $line"; exit 0'`;

  it('is "stopped", not "crashed", and is not restarted', async () => {
    await createServer(panel, admin, 'quitter', { startCommand: quitter, autoRestart: true });
    assert.equal((await serverAction(panel, admin, 'quitter', 'start')).statusCode, 200);
    await eventually(
      async () => ((await historyOf(panel, admin, 'quitter')).includes('ready') ? true : undefined),
      'the server to be ready',
    );
    assert.equal((await sendCommand(panel, admin, 'quitter', 'quit')).statusCode, 200);
    const ended = await eventually(async () => {
      const now = await stats(panel, admin, 'quitter');
      return now.status === 'running' ? undefined : now;
    }, 'the server to end');
    assert.equal(ended.status, 'stopped');
    assert.equal(ended.lastExit?.code, 0);
    const lines = await historyOf(panel, admin, 'quitter');
    assert.ok(lines.includes('bye after quit'), lines.join(' | '));
    assert.ok(
      lines.includes('[panel] the server exited (code 0) after a command; stopped'),
      lines.join(' | '),
    );
    await sleep(1_500); // longer than the first automatic restart would wait
    assert.equal((await stats(panel, admin, 'quitter')).status, 'stopped');
  });

  it('is still a crash when nobody typed anything, and a non-zero code after a command too', async () => {
    await createServer(panel, admin, 'silent', { startCommand: "sh -c 'exit 0'" });
    assert.equal((await serverAction(panel, admin, 'silent', 'start')).statusCode, 200);
    await eventually(
      async () => ((await stats(panel, admin, 'silent')).status === 'crashed' ? true : undefined),
      'an exit nobody asked for to be a crash',
    );
    await createServer(panel, admin, 'failing', {
      startCommand: `sh -c 'echo ready; read line; exit 4'`,
    });
    assert.equal((await serverAction(panel, admin, 'failing', 'start')).statusCode, 200);
    await eventually(
      async () => ((await historyOf(panel, admin, 'failing')).includes('ready') ? true : undefined),
      'the server to be ready',
    );
    assert.equal((await sendCommand(panel, admin, 'failing', 'go')).statusCode, 200);
    const ended = await eventually(async () => {
      const now = await stats(panel, admin, 'failing');
      return now.status === 'running' ? undefined : now;
    }, 'the server to end');
    assert.equal(ended.status, 'crashed');
    assert.equal(ended.lastExit?.code, 4);
  });
});

describe('a failure while recording an exit', () => {
  it('is logged and never ends the panel', async (t) => {
    const lines: string[] = [];
    const panel = await startPanel(
      t,
      { LOG_LEVEL: 'error' },
      { logStream: { write: (line: string) => lines.push(line) } },
    );
    const admin = await register(panel, 'admin');
    await createServer(panel, admin, 'brief', { startCommand: "sh -c 'sleep 1; exit 1'" });
    assert.equal((await serverAction(panel, admin, 'brief', 'start')).statusCode, 200);
    // The database fails under the exit handler: its table is gone for a moment.
    await sql`alter table servers rename to servers_away`.execute(panel.db.kysely);
    try {
      await eventually(
        () =>
          lines.some((line) => line.includes('could not record a server exit')) ? true : undefined,
        'the failure to be logged',
      );
    } finally {
      await sql`alter table servers_away rename to servers`.execute(panel.db.kysely);
    }
    const health = await panel.app.inject({ url: '/api/health' });
    assert.equal(health.statusCode, 200);
    const logged = lines.find((line) => line.includes('could not record a server exit'));
    assert.match(logged ?? '', /"server":"brief"/);
  });
});

describe('a server named like a file of a cgroup', () => {
  it('starts and stops like any other', async (t) => {
    const panel = await startPanel(t);
    const admin = await register(panel, 'admin');
    for (const name of ['tasks', 'cgroup.procs']) {
      await createServer(panel, admin, name, { startCommand: 'sleep 30' });
      const started = await serverAction(panel, admin, name, 'start');
      assert.equal(started.statusCode, 200, started.body);
      assert.equal((await stats(panel, admin, name)).status, 'running');
      assert.equal((await serverAction(panel, admin, name, 'stop')).statusCode, 200);
    }
  });
});
