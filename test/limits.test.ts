/**
 * Per-server limits through the API, on the process runtime: who may set them, what is refused
 * as nonsense, where they are shown, that the kernel holds a server to them (an out-of-memory
 * end is told as such), and that a host without writable cgroups refuses to start a limited
 * server rather than run it unlimited. The runtime-independent cases are in runtimes.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync as fsExists } from 'node:fs';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  assertError,
  createServer,
  eventually,
  historyOf,
  json,
  register,
  sendCommand,
  serverAction,
  stats,
  type Session,
} from './helpers/factories.js';

const MIB = 1024 * 1024;

function putConfig(panel: TestPanel, session: Session, name: string, payload: unknown) {
  return panel.app.inject({
    method: 'PUT',
    url: `/api/servers/${name}/config`,
    headers: session.headers,
    payload: payload as Record<string, unknown>,
  });
}

describe('limits in the configuration', () => {
  let panel: TestPanel;
  let admin: Session;
  let user: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
    user = await register(panel, 'someone');
    await createServer(panel, admin, 'limited', {
      limits: { memoryBytes: 256 * MIB, cpuPercent: 150 },
    });
    const granted = await panel.app.inject({
      method: 'PUT',
      url: '/api/users/someone/servers',
      headers: admin.headers,
      payload: { servers: ['limited'] },
    });
    assert.equal(granted.statusCode, 200, granted.body);
  });

  it('keeps what was set, the default process limit, null for the rest, and shows them in /stats', async () => {
    const config = await panel.app.inject({
      url: '/api/servers/limited/config',
      headers: user.headers,
    });
    assert.deepEqual(json<{ data: { limits: unknown } }>(config).data.limits, {
      memoryBytes: 256 * MIB,
      cpuPercent: 150,
      pids: 512,
      diskBytes: null,
    });
    const now = await stats(panel, user, 'limited');
    assert.deepEqual(
      { cpu: now.cpu, memory: now.memory, pids: now.pids },
      {
        cpu: { percent: 0, limit: 150 },
        memory: { bytes: 0, limit: 256 * MIB },
        pids: { count: 0, limit: 512 },
      },
    );
  });

  it('changes only the limits named, and null lifts one', async () => {
    const changed = await putConfig(panel, admin, 'limited', {
      limits: { pids: 64, cpuPercent: null, diskBytes: 10 * 1024 * MIB },
    });
    assert.equal(changed.statusCode, 200, changed.body);
    assert.deepEqual(json<{ data: { limits: unknown } }>(changed).data.limits, {
      memoryBytes: 256 * MIB,
      cpuPercent: null,
      pids: 64,
      diskBytes: 10 * 1024 * MIB,
    });
  });

  it('lets only admins set limits, the runtime or the image', async () => {
    for (const payload of [
      { limits: { memoryBytes: null } },
      { runtime: 'process' },
      { image: 'debian:12' },
    ]) {
      assertError(await putConfig(panel, user, 'limited', payload), 403, 'FORBIDDEN');
    }
    assertError(
      await panel.app.inject({
        method: 'POST',
        url: '/api/servers/create',
        headers: user.headers,
        payload: { name: 'mine', startCommand: 'true', limits: { pids: 10 } },
      }),
      403,
    );
  });

  it('refuses nonsense with 400 and changes nothing', async () => {
    for (const limits of [
      { memoryBytes: -1 },
      { memoryBytes: 1024 },
      { memoryBytes: 8 * MIB + 0.5 },
      { cpuPercent: 0 },
      { pids: 0 },
      { diskBytes: 'lots' },
      { swap: 1 },
    ]) {
      assertError(await putConfig(panel, admin, 'limited', { limits }), 400, 'VALIDATION_FAILED');
    }
    assertError(
      await putConfig(panel, admin, 'limited', { runtime: 'docker' }),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      await putConfig(panel, admin, 'limited', { runtime: 'vm', image: 'x' }),
      400,
      'VALIDATION_FAILED',
    );
    // Image references the engine would refuse or redirect: never sent to it.
    for (const image of [
      'games//minetest',
      'games/../minetest',
      'Minetest',
      'minetest:a:b',
      '/x',
    ]) {
      assertError(
        await putConfig(panel, admin, 'limited', { runtime: 'docker', image }),
        400,
        'VALIDATION_FAILED',
      );
    }
    const config = await panel.app.inject({
      url: '/api/servers/limited/config',
      headers: admin.headers,
    });
    const data = json<{ data: { limits: unknown; runtime: string } }>(config).data;
    assert.equal(data.runtime, 'process');
    assert.deepEqual(data.limits, {
      memoryBytes: 256 * MIB,
      cpuPercent: null,
      pids: 64,
      diskBytes: 10 * 1024 * MIB,
    });
  });
});

describe('limits enforced by the kernel (process runtime)', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    admin = await register(panel, 'admin');
  });

  it(
    'sets the limits on the cgroup the server runs in, and removes it after the exit',
    {
      skip: noCgroups(),
    },
    async () => {
      await createServer(panel, admin, 'capped', {
        limits: { memoryBytes: 128 * MIB, cpuPercent: 50, pids: 40 },
      });
      assert.equal((await serverAction(panel, admin, 'capped', 'start')).statusCode, 200);
      const running = await stats(panel, admin, 'capped');
      assert.ok(running.pid !== null);
      const cgroups = (await readFile(`/proc/${running.pid}/cgroup`, 'utf8')).split('\n');
      const dirOf = (controller: string): string | undefined => {
        const line = cgroups.find((entry) => {
          const [, controllers] = entry.split(':');
          return (
            controllers === controller ||
            (controller !== '' && controllers?.split(',').includes(controller))
          );
        });
        return line?.split(':').slice(2).join(':');
      };
      if (existsSyncV2()) {
        const dir = path.join('/sys/fs/cgroup', dirOf('') ?? '');
        assert.equal(
          (await readFile(path.join(dir, 'memory.max'), 'utf8')).trim(),
          String(128 * MIB),
        );
        assert.equal((await readFile(path.join(dir, 'cpu.max'), 'utf8')).trim(), '50000 100000');
        assert.equal((await readFile(path.join(dir, 'pids.max'), 'utf8')).trim(), '40');
      } else {
        const memory = path.join('/sys/fs/cgroup/memory', dirOf('memory') ?? '');
        const cpu = path.join('/sys/fs/cgroup/cpu', dirOf('cpu') ?? '');
        const pids = path.join('/sys/fs/cgroup/pids', dirOf('pids') ?? '');
        assert.match(memory, /game-panel-[0-9a-f]+\/server-capped$/);
        const read = async (file: string) => (await readFile(file, 'utf8')).trim();
        assert.equal(await read(path.join(memory, 'memory.limit_in_bytes')), String(128 * MIB));
        assert.equal(await read(path.join(cpu, 'cpu.cfs_quota_us')), '50000');
        assert.equal(await read(path.join(pids, 'pids.max')), '40');
      }
      assert.equal((await serverAction(panel, admin, 'capped', 'stop')).statusCode, 200);
      const parent = path.dirname(
        path.join(
          '/sys/fs/cgroup',
          existsSyncV2() ? '' : 'pids',
          dirOf(existsSyncV2() ? '' : 'pids') ?? '',
        ),
      );
      assert.ok(!(await readdir(parent)).includes('server-capped'));
    },
  );

  it(
    'tells an out-of-memory end as such, in the console and in /stats',
    {
      skip: noCgroups(),
    },
    async () => {
      await createServer(panel, admin, 'hungry', { limits: { memoryBytes: 64 * MIB } });
      assert.equal((await serverAction(panel, admin, 'hungry', 'start')).statusCode, 200);
      await eventually(async () => {
        const lines = await historyOf(panel, admin, 'hungry');
        return lines.some((line) => line.startsWith('Done!')) || undefined;
      }, 'the server to be up');
      assert.equal((await sendCommand(panel, admin, 'hungry', 'alloc 200')).statusCode, 200);
      const ended = await eventually(async () => {
        const now = await stats(panel, admin, 'hungry');
        return now.status === 'crashed' ? now : undefined;
      }, 'the kernel to end the server');
      assert.equal(ended.lastExit?.outOfMemory, true);
      const lines = await historyOf(panel, admin, 'hungry');
      assert.ok(
        lines.some((line) => line.startsWith('[panel] the server ran out of memory')),
        lines.join(' | '),
      );
      assert.ok(!lines.includes('alloc 200'), 'it never got its 200 MiB');
    },
  );
  it(
    'stops a fork loop at the pids limit',
    {
      skip: noCgroups(),
    },
    async () => {
      await createServer(panel, admin, 'forker', { limits: { pids: 20 } });
      assert.equal((await serverAction(panel, admin, 'forker', 'start')).statusCode, 200);
      await upAndRunning(panel, admin, 'forker');
      assert.equal((await sendCommand(panel, admin, 'forker', 'fork 50')).statusCode, 200);
      let most = 0;
      const told = await eventually(async () => {
        most = Math.max(most, (await stats(panel, admin, 'forker')).pids.count);
        const lines = await historyOf(panel, admin, 'forker');
        return lines.find((line) => line.startsWith('fork ')) ?? undefined;
      }, 'the fork loop to end');
      assert.equal(told, 'fork failed: EAGAIN');
      most = Math.max(most, (await stats(panel, admin, 'forker')).pids.count);
      assert.ok(most > 1 && most <= 20, `${most} processes and threads`);
      assert.equal((await serverAction(panel, admin, 'forker', 'stop')).statusCode, 200);
    },
  );

  it(
    'holds a busy loop near its CPU limit, by the cgroup’s own accounting',
    {
      skip: noCgroups(),
    },
    async (t) => {
      await createServer(panel, admin, 'burner', { limits: { cpuPercent: 50 } });
      assert.equal((await serverAction(panel, admin, 'burner', 'start')).statusCode, 200);
      const pid = (await upAndRunning(panel, admin, 'burner')).pid;
      assert.ok(pid !== null);
      const before = await cpuAccounting(pid);
      const started = process.hrtime.bigint();
      assert.equal((await sendCommand(panel, admin, 'burner', 'burn 3')).statusCode, 200);
      await eventually(
        async () => (await historyOf(panel, admin, 'burner')).includes('burn done') || undefined,
        'the burn to end',
      );
      const wallNs = Number(process.hrtime.bigint() - started);
      const now = await cpuAccounting(pid);
      const usedNs = now.usageNs - before.usageNs;
      const ratio = usedNs / wallNs;
      // On a machine so busy that the burn got less than its limit, the kernel had nothing to
      // throttle (the full suite runs four files at once on as few as two cores).
      if (ratio >= 0.4) {
        assert.ok(now.throttled > before.throttled, `the kernel throttled it (CPU ${ratio})`);
      } else {
        t.diagnostic(`the burn got only ${ratio} of a core: too busy to see throttling`);
      }
      // Without the limit it would be about 1.0: one core, busy for the whole burn.
      assert.ok(ratio <= 0.5 + 0.2, `CPU ${usedNs} ns over ${wallNs} ns of wall time`);
      assert.ok(ratio >= 0.05, `it did burn: ${usedNs} ns over ${wallNs} ns`);
      assert.equal((await serverAction(panel, admin, 'burner', 'stop')).statusCode, 200);
    },
  );
});

describe('a host where cgroups cannot be written', () => {
  let panel: TestPanel;
  let admin: Session;

  const suite = suiteScope();
  before(async () => {
    const nowhere = await mkdtemp(path.join(tmpdir(), 'panel-no-cgroups-'));
    panel = await startPanel(suite, {}, { processRuntime: { cgroupRoot: nowhere } });
    admin = await register(panel, 'admin');
  });

  it('refuses a memory limit it cannot enforce (409), and says the process limit is not', async () => {
    await createServer(panel, admin, 'limited', { limits: { memoryBytes: 64 * MIB } });
    const refused = await serverAction(panel, admin, 'limited', 'start');
    assertError(refused, 409, 'LIMITS_UNAVAILABLE');
    assert.match(json<{ message: string }>(refused).message, /memory/);
    assert.equal((await stats(panel, admin, 'limited')).status, 'stopped');

    // Created without limits, it has the default process limit, which this host cannot
    // enforce: it starts, and its console says it runs without it (a panel that is not root).
    await createServer(panel, admin, 'free');
    const started = await serverAction(panel, admin, 'free', 'start');
    assert.equal(started.statusCode, 200, started.body);
    const lines = await historyOf(panel, admin, 'free');
    assert.ok(
      lines.some((line) => line.startsWith('[panel] this host cannot enforce the process limit')),
      lines.join('\n'),
    );
    assert.equal((await serverAction(panel, admin, 'free', 'stop')).statusCode, 200);
  });
});

/** Waits for the server's "Done!" line, and answers its stats then. */
async function upAndRunning(panel: TestPanel, session: Session, name: string) {
  await eventually(async () => {
    const lines = await historyOf(panel, session, name);
    return lines.some((line) => line.startsWith('Done!')) || undefined;
  }, `${name} to be up`);
  return stats(panel, session, name);
}

/** The directory of the cgroup `pid` is in for `controller` (v1), or its one cgroup (v2). */
async function cgroupDir(pid: number, controller: string): Promise<string> {
  const lines = (await readFile(`/proc/${pid}/cgroup`, 'utf8')).split('\n');
  const line = lines.find((entry) => {
    const [, controllers] = entry.split(':');
    return existsSyncV2() ? controllers === '' : controllers?.split(',').includes(controller);
  });
  assert.ok(line, `no ${controller} cgroup in ${lines.join(' | ')}`);
  return path.join(
    '/sys/fs/cgroup',
    existsSyncV2() ? '' : controller,
    line.split(':').slice(2).join(':'),
  );
}

/**
 * The CPU time the cgroup of `pid` used (ns) and how often the kernel throttled it, from the
 * cgroup's own files: v2 `cpu.stat` (usage_usec, nr_throttled); v1 `cpuacct.usage` and the cpu
 * controller's `cpu.stat` (nr_throttled).
 */
async function cpuAccounting(pid: number): Promise<{ usageNs: number; throttled: number }> {
  const field = (text: string, name: string): number => {
    const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    assert.ok(match?.[1] !== undefined, `${name} in ${text}`);
    return Number(match[1]);
  };
  if (existsSyncV2()) {
    const stat = await readFile(path.join(await cgroupDir(pid, ''), 'cpu.stat'), 'utf8');
    return { usageNs: field(stat, 'usage_usec') * 1000, throttled: field(stat, 'nr_throttled') };
  }
  const stat = await readFile(path.join(await cgroupDir(pid, 'cpu'), 'cpu.stat'), 'utf8');
  const usage = await readFile(path.join(await cgroupDir(pid, 'cpuacct'), 'cpuacct.usage'), 'utf8');
  return { usageNs: Number(usage.trim()), throttled: field(stat, 'nr_throttled') };
}

function existsSyncV2(): boolean {
  return fsExists('/sys/fs/cgroup/cgroup.controllers');
}

/** Why the kernel's limits cannot be seen here, or false when they can. */
function noCgroups(): string | false {
  if (process.getuid?.() !== 0) return 'cgroups can be written only by root';
  if (existsSyncV2() || fsExists('/sys/fs/cgroup/memory/cgroup.procs')) return false;
  return 'this host has no cgroup memory controller';
}
