/**
 * Conformance of ServerHost across a restart of the panel: a new host on the same data and
 * records (`recover`) takes back the servers the previous one let go of running (status, pid,
 * console history, input), tells the one that ended meanwhile, leaves stopped ones stopped and
 * starts the ones that should run.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { it } from 'node:test';
import { historyOf, printed, reaches, runtimeConformance, started, until } from './suite.js';

runtimeConformance('host recovery', (machine) => {
  it('takes back what runs, tells what ended, starts what should run', async () => {
    const first = machine().host;
    await machine().addServer('kept', { fields: { stopCommand: 'stop' } });
    await machine().addServer('ending', { flags: ['--crash-after', '4000'] });
    await machine().addServer('idle');
    await machine().addServer('wanted', {
      fields: { stopCommand: 'stop', desiredRunning: true },
    });
    await started(first, 'kept');
    await started(first, 'ending');
    const began = Date.now();
    first.command('kept', 'say before the restart', 'dave');
    await printed(first, 'kept', '[Server] before the restart');
    const pid = first.state('kept').pid;
    assert.ok(pid !== null);

    const host = await machine().restartHost();
    // `ending` ends while no host watches it.
    await sleep(Math.max(0, began + 5000 - Date.now()));
    await host.recover();

    const kept = host.state('kept');
    assert.equal(kept.status, 'running');
    assert.equal(kept.pid, pid);
    assert.ok(historyOf(host, 'kept').includes('[Server] before the restart'));
    host.command('kept', 'say after the restart', 'dave');
    await printed(host, 'kept', '[Server] after the restart');

    const ending = host.state('ending');
    assert.ok(ending.status === 'crashed' || ending.status === 'stopped', ending.status);
    assert.equal(ending.pid, null);
    assert.equal(machine().records.get('ending').pid, null);

    assert.equal(host.state('idle').status, 'stopped');
    assert.equal(host.state('idle').pid, null);

    await reaches(host, 'wanted', 'running');
    await printed(host, 'wanted', 'Done! pid=');
    await until(
      () => (machine().records.get('wanted').pid !== null ? true : undefined),
      'the pid of wanted recorded',
    );
  });
});
