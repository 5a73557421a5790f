/**
 * Schedules through the HTTP surface, with a fake clock the tests advance: no test sleeps for a
 * schedule. Runs reach the stand-in game server through the servers service, as the real panel.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import type { ScheduleClock } from '../src/modules/schedules/scheduler.js';
import { startPanel, suiteScope, testEnvironment, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';
import { serverRoles } from './helpers/roles.js';

/** Time that moves only when told; timers fire, in order, as it passes them. */
class FakeClock implements ScheduleClock {
  #now: number;
  #next = 1;
  readonly #timers = new Map<number, { at: number; run: () => void }>();

  constructor(start: string) {
    this.#now = Date.parse(start);
  }

  now(): Date {
    return new Date(this.#now);
  }

  setTimeout(run: () => void, ms: number): unknown {
    const id = this.#next++;
    this.#timers.set(id, { at: this.#now + ms, run });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number);
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.#timers.size;
  }

  advance(ms: number): void {
    const end = this.#now + ms;
    for (;;) {
      let soonest: [number, { at: number; run: () => void }] | undefined;
      for (const timer of this.#timers) {
        if (timer[1].at <= end && (soonest === undefined || timer[1].at < soonest[1].at)) {
          soonest = timer;
        }
      }
      if (soonest === undefined) break;
      this.#timers.delete(soonest[0]);
      this.#now = Math.max(this.#now, soonest[1].at);
      soonest[1].run();
    }
    this.#now = end;
  }

  /** Moves to `iso` (which must not be in the past). */
  advanceTo(iso: string): void {
    const target = Date.parse(iso);
    assert.ok(target >= this.#now, `the clock is past ${iso}`);
    this.advance(target - this.#now);
  }
}

interface ScheduleBody {
  id: number;
  server: string;
  name: string;
  cron: string;
  timezone: string;
  enabled: boolean;
  onlyWhenRunning: boolean;
  tasks: { action: string; payload?: string; delaySeconds: number }[];
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastOutcome: { status: string; message: string; at: string } | null;
  running: boolean;
  author: string | null;
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed view of a response's data; the caller names the shape it asserts on
const dataOf = <T>(response: LightMyRequestResponse): T => json<{ data: T }>(response).data;

const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

describe('schedules', () => {
  let panel: TestPanel;
  let clock: FakeClock;
  let admin: Session;
  let member: Session;
  let outsider: Session;

  const request = (
    session: Session,
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: object,
  ) =>
    panel.app.inject({
      method,
      url,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload }),
    });

  const make = async (server: string, body: object, session = admin): Promise<ScheduleBody> => {
    const response = await request(session, 'POST', `/api/servers/${server}/schedules`, body);
    assert.equal(response.statusCode, 200, response.body);
    return dataOf<ScheduleBody>(response);
  };

  const read = async (server: string, id: number): Promise<ScheduleBody> => {
    const response = await request(admin, 'GET', `/api/servers/${server}/schedules/${id}`);
    assert.equal(response.statusCode, 200, response.body);
    return dataOf<ScheduleBody>(response);
  };

  const outcomeOf = (server: string, id: number, status: string) =>
    eventually(async () => {
      const schedule = await read(server, id);
      return schedule.lastOutcome?.status === status && !schedule.running
        ? schedule.lastOutcome
        : undefined;
    }, `outcome ${status}`);

  const ensure = async (server: string, status: 'running' | 'stopped') => {
    const now = (await stats(panel, admin, server)).status;
    if (status === 'running' && now !== 'running' && now !== 'starting') {
      assert.equal((await serverAction(panel, admin, server, 'start')).statusCode, 200);
    }
    if (status === 'stopped' && (now === 'running' || now === 'starting')) {
      assert.equal((await serverAction(panel, admin, server, 'stop')).statusCode, 200);
    }
    await eventually(
      async () => ((await stats(panel, admin, server)).status === status ? true : undefined),
      `the server ${status}`,
    );
  };

  const suite = suiteScope();
  before(async () => {
    clock = new FakeClock('2030-03-29T12:00:30.000Z');
    panel = await startPanel(suite, {}, { scheduleClock: clock });
    ({ admin, member, outsider } = await serverRoles(panel, { server: 'sched' }));
  });

  it('makes, lists, reads, changes and deletes a schedule; nextRunAt follows the timezone', async () => {
    const made = await make('sched', {
      name: 'Nightly',
      cron: '0 4 * * *',
      timezone: 'Europe/Berlin',
      tasks: [{ action: 'command', payload: 'say nightly' }],
    });
    assert.equal(made.enabled, true);
    assert.equal(made.onlyWhenRunning, false);
    assert.deepEqual(made.tasks, [{ action: 'command', payload: 'say nightly', delaySeconds: 0 }]);
    // 04:00 in Berlin on 30 March 2030 is still winter time (UTC+1).
    assert.equal(made.nextRunAt, '2030-03-30T03:00:00.000Z');
    assert.equal(made.lastRunAt, null);
    assert.equal(made.lastOutcome, null);

    const list = dataOf<ScheduleBody[]>(
      await request(admin, 'GET', '/api/servers/sched/schedules'),
    );
    assert.ok(list.some((schedule) => schedule.id === made.id));

    const utc = await make('sched', {
      name: 'UTC by default',
      cron: '15 6 * * *',
      tasks: [{ action: 'command', payload: 'say at 06:15' }],
    });
    assert.equal(utc.timezone, 'UTC');
    assert.equal(utc.nextRunAt, '2030-03-30T06:15:00.000Z');

    clock.advance(24 * 3600_000);
    // A day later: 04:00 in Berlin is summer time (UTC+2) from 31 March.
    assert.equal((await read('sched', made.id)).nextRunAt, '2030-03-31T02:00:00.000Z');

    const changed = await request(admin, 'PUT', `/api/servers/sched/schedules/${made.id}`, {
      timezone: 'America/New_York',
      enabled: false,
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.equal(dataOf<ScheduleBody>(changed).timezone, 'America/New_York');
    assert.equal(dataOf<ScheduleBody>(changed).nextRunAt, null, 'disabled: no next run');
    const enabled = await request(admin, 'PUT', `/api/servers/sched/schedules/${made.id}`, {
      enabled: true,
    });
    // 04:00 in New York (UTC-4 in summer time) after 2030-03-30T12:00:30Z.
    assert.equal(dataOf<ScheduleBody>(enabled).nextRunAt, '2030-03-31T08:00:00.000Z');

    for (const id of [made.id, utc.id]) {
      const deleted = await request(admin, 'DELETE', `/api/servers/sched/schedules/${id}`);
      assert.equal(deleted.statusCode, 200, deleted.body);
      assertError(await request(admin, 'GET', `/api/servers/sched/schedules/${id}`), 404);
    }
    assertError(await request(admin, 'DELETE', `/api/servers/sched/schedules/${made.id}`), 404);
    assertError(await request(admin, 'GET', '/api/servers/nope/schedules'), 404);
    assertError(
      await request(admin, 'POST', '/api/servers/nope/schedules', {
        name: 'x',
        cron: '* * * * *',
        tasks: [{ action: 'start' }],
      }),
      404,
    );
  });

  it('refuses a bad cron, timezone or task with 400 naming the field', async () => {
    const base = { name: 'Bad', cron: '*/5 * * * *', tasks: [{ action: 'start' }] };
    const cases: [object, string, RegExp][] = [
      [{ cron: '61 * * * *' }, 'body/cron', /minute/],
      [{ cron: '* * * * * *' }, 'body/cron', /5 parts/],
      [{ cron: 'not a cron' }, 'body/cron', /./],
      [{ cron: '0 0 31 2 *' }, 'body/cron', /never/],
      [{ timezone: 'Mars/Olympus_Mons' }, 'body/timezone', /IANA/],
      [{ timezone: '+01:00' }, 'body/timezone', /IANA/],
      [{ tasks: [{ action: 'command' }] }, 'body/tasks/0/payload', /command/],
      [
        { tasks: [{ action: 'start' }, { action: 'command', payload: 'say a\nsay b' }] },
        'body/tasks/1/payload',
        /single line/,
      ],
      [{ tasks: [{ action: 'stop', payload: 'x' }] }, 'body/tasks/0/payload', /only a command/],
    ];
    for (const [change, path, message] of cases) {
      const response = await request(admin, 'POST', '/api/servers/sched/schedules', {
        ...base,
        ...change,
      });
      assertError(response, 400, 'VALIDATION_FAILED');
      const body = json<{ message: string; details: { path: string; message: string }[] }>(
        response,
      );
      const detail = body.details[0];
      assert.ok(detail, response.body);
      assert.equal(detail.path, path, response.body);
      assert.match(detail.message, message, response.body);
    }
    // What the body schema refuses: too many tasks, a long delay, an unknown action or field.
    for (const change of [
      { tasks: Array.from({ length: 21 }, () => ({ action: 'start' })) },
      { tasks: [] },
      { tasks: [{ action: 'start', delaySeconds: 3601 }] },
      { tasks: [{ action: 'reboot' }] },
      { owner: 'me' },
    ]) {
      assertError(
        await request(admin, 'POST', '/api/servers/sched/schedules', { ...base, ...change }),
        400,
      );
    }
    const good = await make('sched', base);
    const bad = await request(admin, 'PUT', `/api/servers/sched/schedules/${good.id}`, {
      cron: '* 25 * * *',
    });
    assertError(bad, 400, 'VALIDATION_FAILED');
    assert.match(bad.body, /body\/cron/);
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${good.id}`);
  });

  it('runs its commands when due, each after its delay, as typed by the schedule', async () => {
    await ensure('sched', 'running');
    const schedule = await make('sched', {
      name: 'greeter',
      cron: '*/5 * * * *',
      tasks: [
        { action: 'command', payload: 'say hello from the schedule' },
        { action: 'command', payload: 'say thirty seconds later', delaySeconds: 30 },
      ],
    });
    assert.ok(schedule.nextRunAt !== null);
    const due = schedule.nextRunAt;
    clock.advanceTo(new Date(Date.parse(due) - 1000).toISOString());
    await settle();
    assert.equal((await read('sched', schedule.id)).lastRunAt, null, 'not before it is due');

    clock.advanceTo(due);
    await eventually(async () => {
      const lines = await historyOf(panel, admin, 'sched');
      return lines.includes('[Server] hello from the schedule') ? lines : undefined;
    }, 'the first command');
    const lines = await historyOf(panel, admin, 'sched');
    assert.ok(
      lines.includes('[panel] schedule:greeter> say hello from the schedule'),
      lines.join('\n'),
    );
    assert.equal((await read('sched', schedule.id)).lastRunAt, due);
    // The run now waits 30 s on the fake clock: nothing more until the clock gets there.
    await eventually(() => (clock.pending >= 2 ? true : undefined), 'the delay to be waiting');
    clock.advance(29_000);
    await settle();
    assert.ok(!(await historyOf(panel, admin, 'sched')).includes('[Server] thirty seconds later'));
    clock.advance(1000);
    await eventually(async () => {
      const lines = await historyOf(panel, admin, 'sched');
      return lines.includes('[Server] thirty seconds later') ? true : undefined;
    }, 'the delayed command');
    const outcome = await outcomeOf('sched', schedule.id, 'ok');
    assert.match(outcome.message, /2 tasks/);
    const next = await read('sched', schedule.id);
    assert.equal(Date.parse(next.nextRunAt ?? '') - Date.parse(due), 5 * 60_000);
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${schedule.id}`);
  });

  it('stops, starts and restarts the server', async () => {
    await ensure('sched', 'running');
    const pid = (await stats(panel, admin, 'sched')).pid;
    const cycle = await make('sched', {
      name: 'cycle',
      cron: '0 0 1 1 *',
      tasks: [{ action: 'stop' }, { action: 'start', delaySeconds: 10 }],
    });
    // The scheduler's own timer for the next cron time is pending already; the delay adds one.
    const armed = clock.pending;
    const run = await request(admin, 'POST', `/api/servers/sched/schedules/${cycle.id}/run`);
    assert.equal(run.statusCode, 200, run.body);
    assert.equal(dataOf<ScheduleBody>(run).running, true);
    await eventually(
      async () => ((await stats(panel, admin, 'sched')).status === 'stopped' ? true : undefined),
      'the stop task',
    );
    await eventually(() => (clock.pending > armed ? true : undefined), 'the delay');
    clock.advance(10_000);
    await outcomeOf('sched', cycle.id, 'ok');
    const started = await stats(panel, admin, 'sched');
    assert.equal(started.status, 'running');
    assert.notEqual(started.pid, pid);

    const restart = await make('sched', {
      name: 'restarter',
      cron: '0 0 1 1 *',
      tasks: [{ action: 'restart' }],
    });
    await request(admin, 'POST', `/api/servers/sched/schedules/${restart.id}/run`);
    await outcomeOf('sched', restart.id, 'ok');
    const restarted = await stats(panel, admin, 'sched');
    assert.equal(restarted.status, 'running');
    assert.notEqual(restarted.pid, started.pid);
    for (const id of [cycle.id, restart.id]) {
      await request(admin, 'DELETE', `/api/servers/sched/schedules/${id}`);
    }
  });

  it('records a failed task, and stops the run there', async () => {
    await ensure('sched', 'running');
    const schedule = await make('sched', {
      name: 'failing',
      cron: '0 0 1 1 *',
      tasks: [{ action: 'start' }, { action: 'command', payload: 'say never said' }],
    });
    await request(admin, 'POST', `/api/servers/sched/schedules/${schedule.id}/run`);
    const outcome = await outcomeOf('sched', schedule.id, 'failed');
    assert.match(outcome.message, /Task 1 \(start\) failed: .*already running/);
    await settle();
    assert.ok(!(await historyOf(panel, admin, 'sched')).includes('[Server] never said'));
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${schedule.id}`);
  });

  it('skips a run while the server is stopped when it runs only while the server runs', async () => {
    await ensure('sched', 'stopped');
    const schedule = await make('sched', {
      name: 'only-running',
      cron: '* * * * *',
      onlyWhenRunning: true,
      tasks: [{ action: 'start' }],
    });
    clock.advance(60_000);
    const outcome = await outcomeOf('sched', schedule.id, 'skipped');
    assert.match(outcome.message, /stopped/);
    assert.equal((await stats(panel, admin, 'sched')).status, 'stopped', 'the task never ran');
    assert.equal((await read('sched', schedule.id)).lastRunAt, null);
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${schedule.id}`);
  });

  it('runs one run of a schedule at a time', async () => {
    await ensure('sched', 'running');
    const schedule = await make('sched', {
      name: 'slow',
      cron: '* * * * *',
      tasks: [
        { action: 'command', payload: 'say slow one' },
        { action: 'command', payload: 'say slow two', delaySeconds: 590 },
      ],
    });
    clock.advance(60_000);
    await eventually(
      async () => ((await read('sched', schedule.id)).running ? true : undefined),
      'the run',
    );
    assertError(
      await request(admin, 'POST', `/api/servers/sched/schedules/${schedule.id}/run`),
      409,
      'CONFLICT',
    );
    await eventually(() => (clock.pending >= 2 ? true : undefined), 'the delay');
    clock.advance(60_000);
    const skipped = await outcomeOfWhileRunning(schedule.id);
    assert.match(skipped.message, /previous run was still going/);
    // The delay ends between two due times, which find the run still going.
    clock.advance(530_000);
    await outcomeOf('sched', schedule.id, 'ok');
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${schedule.id}`);
  });

  /** The outcome recorded while a run is still in progress. */
  const outcomeOfWhileRunning = (id: number) =>
    eventually(async () => {
      const schedule = await read('sched', id);
      return schedule.lastOutcome?.status === 'skipped' && schedule.running
        ? schedule.lastOutcome
        : undefined;
    }, 'a skipped due time');

  it('lets users with the server manage its schedules; others get 403; it acts as its author', async () => {
    assertError(await request(outsider, 'GET', '/api/servers/sched/schedules'), 403, 'FORBIDDEN');
    const mine = await make(
      'sched',
      {
        name: 'member-made',
        cron: '0 0 1 1 *',
        tasks: [{ action: 'command', payload: 'say by member' }],
      },
      member,
    );
    assert.equal(mine.author, 'member');
    for (const [method, url] of [
      ['GET', `/api/servers/sched/schedules/${mine.id}`],
      ['PUT', `/api/servers/sched/schedules/${mine.id}`],
      ['POST', `/api/servers/sched/schedules/${mine.id}/run`],
      ['DELETE', `/api/servers/sched/schedules/${mine.id}`],
    ] as const) {
      assertError(
        await request(outsider, method, url, method === 'PUT' ? { name: 'x' } : undefined),
        403,
      );
    }
    const renamed = await request(member, 'PUT', `/api/servers/sched/schedules/${mine.id}`, {
      name: 'member-renamed',
    });
    assert.equal(renamed.statusCode, 200, renamed.body);
    await ensure('sched', 'running');
    await request(admin, 'POST', `/api/servers/sched/schedules/${mine.id}/run`);
    await outcomeOf('sched', mine.id, 'ok');
    const lines = await historyOf(panel, admin, 'sched');
    assert.ok(lines.includes('[panel] schedule:member-renamed> say by member'), lines.join('\n'));

    // The member loses the server: the schedule no longer runs, is disabled, and says why.
    await request(admin, 'PUT', '/api/users/member/servers', { servers: [] });
    assertError(await request(member, 'GET', `/api/servers/sched/schedules/${mine.id}`), 403);
    const before = (await historyOf(panel, admin, 'sched')).length;
    await request(admin, 'POST', `/api/servers/sched/schedules/${mine.id}/run`);
    const refused = await outcomeOf('sched', mine.id, 'failed');
    assert.match(
      refused.message,
      /Not run, and the schedule was disabled: member no longer has the server/,
    );
    const after = await read('sched', mine.id);
    assert.equal(after.enabled, false);
    assert.equal(after.nextRunAt, null);
    assert.ok(
      !(await historyOf(panel, admin, 'sched')).slice(before).some((l) => l.includes('by member')),
      'the command was not typed',
    );
    await request(admin, 'PUT', '/api/users/member/servers', { servers: ['sched'] });
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${mine.id}`);
  });

  it('makes a task only for whoever holds its permission: console.write, power, backups.create', async () => {
    const limited = await register(panel, 'limited');
    const grant = async (permissions: string[]) => {
      const response = await request(admin, 'PUT', '/api/servers/sched/users/limited', {
        permissions,
      });
      assert.equal(response.statusCode, 200, response.body);
    };
    await grant(['schedules']);
    const body = (action: string) => ({
      name: `limited ${action}`,
      cron: '0 0 1 1 *',
      tasks: [
        { action: 'command', payload: 'say harmless' },
        ...(action === 'command' ? [] : [{ action }]),
      ],
    });
    // Holding schedules alone: no task that does what the user may not do.
    const refusals: [string, RegExp][] = [
      ['command', /tasks\.0: a command task needs the console\.write permission/],
      ['start', /console\.write/],
    ];
    for (const [action, message] of refusals) {
      const response = await request(limited, 'POST', '/api/servers/sched/schedules', body(action));
      assertError(response, 403, 'FORBIDDEN');
      assert.match(json<{ message: string }>(response).message, message);
    }
    await grant(['schedules', 'console.write']);
    for (const [action, permission] of [
      ['start', 'power'],
      ['stop', 'power'],
      ['restart', 'power'],
      ['backup', 'backups.create'],
    ]) {
      const response = await request(
        limited,
        'POST',
        '/api/servers/sched/schedules',
        body(action!),
      );
      assertError(response, 403, 'FORBIDDEN');
      assert.match(
        json<{ message: string }>(response).message,
        new RegExp(
          `tasks\\.1: a ${action} task needs the ${permission!.replace('.', '\\.')} permission`,
        ),
      );
    }
    // Someone else's schedule with a power task: neither changed nor run by the limited user.
    const admins = await make('sched', {
      name: 'admin restart',
      cron: '0 0 1 1 *',
      tasks: [{ action: 'restart' }],
    });
    assertError(
      await request(limited, 'PUT', `/api/servers/sched/schedules/${admins.id}`, { name: 'mine' }),
      403,
      'FORBIDDEN',
    );
    assertError(
      await request(limited, 'POST', `/api/servers/sched/schedules/${admins.id}/run`),
      403,
      'FORBIDDEN',
    );
    assert.equal((await read('sched', admins.id)).author, 'admin');
    // With the permissions, the same schedules are made.
    await grant(['schedules', 'console.write', 'power', 'backups.create']);
    for (const action of ['start', 'stop', 'restart', 'backup']) {
      const made = await make('sched', body(action), limited);
      assert.equal(made.author, 'limited');
      await request(admin, 'DELETE', `/api/servers/sched/schedules/${made.id}`);
    }
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${admins.id}`);
  });

  it('stops a schedule whose author lost a task’s permission when it comes due, saying why', async () => {
    await ensure('sched', 'running');
    const author = await register(panel, 'author');
    const grant = async (permissions: string[]) => {
      const response = await request(admin, 'PUT', '/api/servers/sched/users/author', {
        permissions,
      });
      assert.equal(response.statusCode, 200, response.body);
    };
    await grant(['schedules', 'console.write']);
    const schedule = await make(
      'sched',
      {
        name: 'every-minute',
        cron: '* * * * *',
        tasks: [{ action: 'command', payload: 'say typed by a lost right' }],
      },
      author,
    );
    await grant(['schedules']);
    assert.ok(schedule.nextRunAt !== null);
    clock.advanceTo(schedule.nextRunAt);
    const outcome = await outcomeOf('sched', schedule.id, 'failed');
    assert.match(
      outcome.message,
      /Not run, and the schedule was disabled: author no longer holds the console\.write permission on the server/,
    );
    const after = await read('sched', schedule.id);
    assert.equal(after.enabled, false);
    assert.equal(after.lastRunAt, null, 'it did not run');
    // A minute later: nothing, it is disabled.
    clock.advance(60_000);
    await settle();
    assert.equal((await read('sched', schedule.id)).lastOutcome?.at, outcome.at);
    assert.ok(
      !(await historyOf(panel, admin, 'sched')).some((line) => line.includes('a lost right')),
    );
    // The audit log says why too.
    const audit = await request(
      admin,
      'GET',
      '/api/audit?via=schedule&action=schedule.run&limit=1',
    );
    const [entry] = json<{ data: { outcome: string; details: { message: string } }[] }>(audit).data;
    assert.equal(entry?.outcome, 'failed');
    assert.match(entry.details.message, /author no longer holds the console\.write permission/);
    await request(admin, 'DELETE', `/api/servers/sched/schedules/${schedule.id}`);
  });

  it("deletes a server's schedules with the server, and their timers with them", async () => {
    await createServer(panel, admin, 'doomed');
    const schedule = await make('doomed', {
      name: 'orphan',
      cron: '* * * * *',
      tasks: [{ action: 'start' }],
    });
    assert.ok(schedule.nextRunAt !== null);
    const before = clock.pending;
    const deleted = await request(admin, 'DELETE', '/api/servers/doomed');
    assert.equal(deleted.statusCode, 200, deleted.body);
    const rows = await panel.db.kysely
      .selectFrom('schedules')
      .select('id')
      .where('server_name', '=', 'doomed')
      .execute();
    assert.deepEqual(rows, []);
    assert.ok(clock.pending <= before);
    clock.advance(120_000);
    await settle();
    assertError(await request(admin, 'GET', '/api/servers/doomed/schedules'), 404);
  });
});

describe('schedules across panel restarts', () => {
  it('runs a missed run at start when less than one interval late, else records it skipped', async () => {
    const { env, cleanup } = await testEnvironment();
    const open = async (at: string) => {
      const clock = new FakeClock(at);
      const app = await buildApp(loadConfig(env), { scheduleClock: clock });
      await app.ready();
      return app;
    };
    try {
      let app = await open('2030-05-01T10:30:00.000Z');
      const panel = { app } as unknown as TestPanel;
      const admin = await register(panel, 'admin');
      await createServer(panel, admin, 'restarts');
      const made = await app.inject({
        method: 'POST',
        url: '/api/servers/restarts/schedules',
        headers: admin.headers,
        payload: { name: 'hourly', cron: '0 * * * *', tasks: [{ action: 'start' }] },
      });
      assert.equal(made.statusCode, 200, made.body);
      const { id, nextRunAt } = dataOf<ScheduleBody>(made);
      assert.equal(nextRunAt, '2030-05-01T11:00:00.000Z');
      await app.close();

      const readIn = async (): Promise<ScheduleBody> => {
        const response = await app.inject({
          url: `/api/servers/restarts/schedules/${id}`,
          headers: admin.headers,
        });
        assert.equal(response.statusCode, 200, response.body);
        return dataOf<ScheduleBody>(response);
      };

      // Back 20 minutes after the 11:00 run, less than the hour to the next: it runs once.
      app = await open('2030-05-01T11:20:00.000Z');
      const ran = await eventually(async () => {
        const schedule = await readIn();
        return schedule.lastOutcome?.status === 'ok' ? schedule : undefined;
      }, 'the missed run');
      assert.equal(ran.lastRunAt, '2030-05-01T11:20:00.000Z');
      assert.equal(ran.nextRunAt, '2030-05-01T12:00:00.000Z');
      await app.close();

      // Back at 14:30: the first missed run (12:00) is more than an hour late. Skipped.
      app = await open('2030-05-01T14:30:00.000Z');
      const skipped = await readIn();
      assert.ok(skipped.lastOutcome);
      assert.equal(skipped.lastOutcome.status, 'skipped');
      assert.match(skipped.lastOutcome.message, /2030-05-01T12:00:00.000Z/);
      assert.equal(skipped.lastRunAt, '2030-05-01T11:20:00.000Z', 'it did not run');
      assert.equal(skipped.nextRunAt, '2030-05-01T15:00:00.000Z');
      await app.close();

      // And back at 14:40 again: nothing was missed since.
      app = await open('2030-05-01T14:40:00.000Z');
      const quiet = await readIn();
      assert.deepEqual(quiet.lastOutcome, skipped.lastOutcome);
      await app.close();
    } finally {
      await cleanup();
    }
  });
});
