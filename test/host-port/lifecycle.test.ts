/**
 * Conformance of ServerHost: a server's life (start, stop, kill, restart, a crash, holds), the
 * statuses its listeners hear and its last exit; its console (history, batches in order, input
 * shown as typed, watched lines); and what it uses (CPU, memory, processes).
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { ServerStatus } from '../../src/domain/server.js';
import {
  runtimeConformance,
  historyOf,
  listen,
  printed,
  hears,
  reaches,
  rejectsWith,
  started,
  until,
} from './suite.js';

runtimeConformance('host lifecycle', (machine) => {
  it('starts a server: it runs, with a pid and a start time, printing into its history', async () => {
    const { host } = machine();
    await machine().addServer('alpha');
    assert.equal(host.state('alpha').status, 'stopped');
    assert.equal(host.state('alpha').pid, null);
    const before = Date.now();
    await started(host, 'alpha');
    const state = host.state('alpha');
    assert.equal(state.status, 'running');
    assert.ok(state.pid !== null && state.pid > 0, `pid ${String(state.pid)}`);
    assert.ok(state.startedAt !== null && state.startedAt.getTime() >= before - 2000);
    assert.ok(historyOf(host, 'alpha').some((line) => line.includes('Starting fake server')));
    await rejectsWith(host.start('alpha'), 'CONFLICT');
  });

  it('stops a server with its stop command: a clean stop, recorded as its last exit', async () => {
    const { host } = machine();
    await machine().addServer('stopper', { fields: { stopCommand: 'stop' } });
    await started(host, 'stopper');
    const heard = listen(host, 'stopper');
    assert.equal(await host.stop('stopper'), 'stopped');
    await hears(heard, 'stopped');
    heard.stop();
    const state = host.state('stopper');
    assert.equal(state.status, 'stopped');
    assert.equal(state.pid, null);
    assert.ok(state.lastExit !== null);
    assert.equal(state.lastExit.code, 0);
    assert.equal(state.lastExit.cleanStop, true);
    assert.equal(state.lastExit.outOfMemory, false);
    await printed(host, 'stopper', 'Stopping server');
    const statuses = heard.statuses();
    assert.deepEqual(statuses, ['stopping', 'stopped'] satisfies ServerStatus[]);
    // Stopping what is stopped is refused, and changes nothing.
    await rejectsWith(host.stop('stopper'), 'CONFLICT');
    assert.equal(host.state('stopper').lastExit?.cleanStop, true);
  });

  // A kill that waited for the hour-long stop timeout fails by the test's time limit.
  it('kills a server that ignores its stop signal, at once', { timeout: 120_000 }, async () => {
    const { host } = machine();
    await machine().addServer('stubborn', {
      flags: ['--ignore-term'],
      fields: { stopTimeoutSeconds: 3600 },
    });
    await started(host, 'stubborn');
    assert.equal(await host.kill('stubborn'), 'stopped');
    const state = host.state('stubborn');
    assert.equal(state.status, 'stopped');
    assert.equal(state.pid, null);
    assert.ok(state.lastExit !== null);
    assert.equal(state.lastExit.cleanStop, false);
    // How it ended is not promised (SIGKILL, 137, or unknown: null and null), only that it was
    // not a clean stop.
    assert.notEqual(state.lastExit.code, 0);
    assert.ok(!historyOf(host, 'stubborn').some((line) => line.includes('Stopping server')));
  });

  it('restarts a running server: a new process, running again', async () => {
    const { host } = machine();
    await machine().addServer('again', { fields: { stopCommand: 'stop' } });
    await started(host, 'again');
    const first = host.state('again');
    const heard = listen(host, 'again');
    const answer = await host.restart('again');
    assert.ok(answer === 'starting' || answer === 'running', `restart answered ${answer}`);
    await reaches(host, 'again', 'running');
    await until(() => (heard.statuses().at(-1) === 'running' ? true : undefined), 'running heard');
    heard.stop();
    const second = host.state('again');
    assert.ok(second.startedAt !== null && first.startedAt !== null);
    assert.ok(second.startedAt.getTime() > first.startedAt.getTime());
    assert.equal(second.lastExit?.cleanStop, true);
    const statuses = heard.statuses();
    assert.deepEqual(statuses.slice(0, 2), ['stopping', 'stopped']);
    assert.equal(statuses.at(-1), 'running');
    await until(
      () =>
        historyOf(host, 'again').filter((line) => line.includes('Done! pid=')).length >= 2
          ? true
          : undefined,
      'a second start in the history',
    );
  });

  it('tells a crash: status crashed, the exit code kept, not a clean stop', async () => {
    const { host } = machine();
    await machine().addServer('fragile', { flags: ['--crash-after', '500'] });
    const heard = listen(host, 'fragile');
    await host.start('fragile');
    await reaches(host, 'fragile', 'crashed');
    await hears(heard, 'crashed');
    heard.stop();
    const state = host.state('fragile');
    assert.equal(state.pid, null);
    assert.equal(state.lastExit?.code, 7);
    assert.equal(state.lastExit.cleanStop, false);
    const statuses = heard.statuses();
    assert.equal(statuses.at(-1), 'crashed');
    assert.ok(statuses.includes('running'), statuses.join(' '));
  });

  it('holds a stopped server from starting until released; a running one cannot be held', async () => {
    const { host } = machine();
    await machine().addServer('held', { fields: { stopCommand: 'stop' } });
    const release = await host.hold('held', 'a backup runs');
    await rejectsWith(host.start('held'), 'BACKUP_IN_PROGRESS');
    assert.equal(host.state('held').status, 'stopped');
    release();
    await started(host, 'held');
    await rejectsWith(host.hold('held', 'a backup runs'), 'CONFLICT');
    await host.stop('held');
  });

  it('measures a running server and answers zeros for a stopped one', async () => {
    const { host } = machine();
    await machine().addServer('measured', { fields: { stopCommand: 'stop' } });
    assert.deepEqual(await host.usage('measured'), { cpuPercent: 0, memoryBytes: 0, pids: 0 });
    await started(host, 'measured');
    const usage = await host.usage('measured');
    assert.ok(usage.memoryBytes > 1024 * 1024, `memory ${usage.memoryBytes}`);
    assert.ok(usage.pids >= 1, `pids ${usage.pids}`);
    assert.ok(usage.cpuPercent >= 0);
    await host.stop('measured');
    assert.deepEqual(await host.usage('measured'), { cpuPercent: 0, memoryBytes: 0, pids: 0 });
  });
});

runtimeConformance('host console', (machine) => {
  it('writes input to the server, shown as typed by its sender, and hears its answer', async () => {
    const { host } = machine();
    await machine().addServer('talker', { fields: { stopCommand: 'stop' } });
    await started(host, 'talker');
    const heard = listen(host, 'talker');
    host.command('talker', 'say hello there', 'alice');
    await printed(host, 'talker', '[Server] hello there');
    await until(
      () => (heard.lines().includes('[Server] hello there') ? true : undefined),
      'the answer heard',
    );
    heard.stop();
    const history = historyOf(host, 'talker');
    const typed = history.findIndex(
      (line) => line.includes('alice') && line.includes('say hello there'),
    );
    const answered = history.indexOf('[Server] hello there');
    assert.ok(typed >= 0, 'the input is in the history, with who typed it');
    assert.ok(answered > typed, 'the answer comes after the input');
    const told = heard.lines();
    assert.ok(told.includes('[Server] hello there'), told.join('\n'));
    for (const line of host.console('talker').history())
      assert.ok(!Number.isNaN(Date.parse(line.ts)));
    await host.stop('talker');
    assert.throws(
      () => {
        host.command('talker', 'say nobody', 'alice');
      },
      (error: unknown) => error instanceof Error && 'code' in error && error.code === 'CONFLICT',
    );
  });

  it('delivers many lines in batches, in order, none lost, to history and listeners', async () => {
    const { host } = machine();
    await machine().addServer('chatty', { fields: { stopCommand: 'stop' } });
    await started(host, 'chatty');
    const heard = listen(host, 'chatty');
    host.command('chatty', 'spam 500', 'bob');
    await printed(host, 'chatty', 'line 499');
    await until(() => (heard.lines().includes('line 499') ? true : undefined), 'line 499 heard');
    heard.stop();
    const expected = Array.from({ length: 500 }, (_, i) => `line ${i}`);
    const told = heard.lines().filter((line) => line.startsWith('line '));
    assert.deepEqual(told, expected);
    const batches = heard.events.filter((event) => event.type === 'log').length;
    assert.ok(batches < 500, `500 lines came in ${batches} batches, not one each`);
    const history = historyOf(host, 'chatty').filter((line) => line.startsWith('line '));
    assert.deepEqual(history, expected);
    await host.stop('chatty');
  });

  it('calls a watcher once for a matching line of the server, until unwatched', async () => {
    const { host } = machine();
    await machine().addServer('watched', { fields: { stopCommand: 'stop' } });
    await started(host, 'watched');
    let plain = 0;
    let regex = 0;
    const unwatchPlain = host.console('watched').watch(['[Server] ping'], () => (plain += 1));
    const unwatchRegex = host.console('watched').watch(['regex:^\\[Server\\] p[a-z]+g$'], () => {
      regex += 1;
    });
    // The panel's own line holds the text too; only the server's lines count.
    host.command('watched', 'say ping', 'carol');
    await until(() => (plain === 1 && regex === 1 ? true : undefined), 'both watchers called');
    host.command('watched', 'say pong', 'carol');
    await printed(host, 'watched', '[Server] pong');
    assert.equal(plain, 1);
    assert.equal(regex, 1, 'a watcher is called once');
    unwatchPlain();
    unwatchRegex();
    await host.stop('watched');
  });
});
