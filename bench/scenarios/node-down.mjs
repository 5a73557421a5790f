// The panel's response time while a node is unreachable (issue 30: "a node that goes away does
// not take the panel with it"). A panel of the scenario's own (its default settings: every node
// asked every 15 s, within 5 s) with 10 servers on `local` and one running in a container on an
// engine standing in for a node (a stoppable one of test/helpers/docker-nodes.ts, leased to this
// process). One client asks the requests of a user clicking through the UI, one at a time, in
// turn, while a second polls the stats of the server on the node every second (its page, open
// in a browser): first with the node reachable, then with the node cut off (every packet to its
// engine dropped in its namespace: no refusal, no reset, as behind a dead link), then with its
// engine stopped (connections refused; the container runs on, `--live-restore`). Each figure is
// given against the same request with the node reachable, measured in the same run. The node is
// brought back after each, and the server on it stopped and deleted at the end.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  addNode,
  createLocalServer,
  createServerOn,
  dockerNodes,
  latencyFigures,
  removeLeftovers,
  requestsInTurn,
  scenarioPanel,
} from '../lib/nodes.mjs';
import { summariseLog } from '../lib/panel.mjs';
import { ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { log, nowMs, round, sleep, stopChild, waitFor } from '../lib/util.mjs';

const LOCAL_SERVERS = 10;
const LOCAL = 'local-00';
const REMOTE = 'on-node';
const LISTED_FILES = 100;
/** How long each call of the clean-up may take. */
const TEARDOWN_MS = 20_000;

/** The node's health as `GET /api/admin/nodes` answers it. */
const healthIn = (body, name) => body?.data?.find((node) => node.name === name)?.health?.status;
/** The remote server's status as `GET /api/servers` answers it. */
const statusIn = (body, name) => body?.data?.find((server) => server.name === name)?.status;

/**
 * Polls `path` one request at a time, a second apart (from the end of one to the start of the
 * next), until `stop()` is called; resolves with the latencies and statuses.
 */
function poller(api, urlPath) {
  const latencies = [];
  const statuses = {};
  let running = true;
  const done = (async () => {
    while (running) {
      const at = nowMs();
      let status;
      try {
        status = (await api.request('GET', urlPath, undefined, { timeoutMs: 60_000 })).status;
      } catch {
        status = 'no answer';
      }
      latencies.push(nowMs() - at);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (running) await sleep(1000);
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      const sorted = [...latencies].sort((a, b) => a - b);
      return {
        requests: latencies.length,
        p50Ms: round(sorted[Math.floor(sorted.length / 2)] ?? null, 1),
        maxMs: round(sorted[sorted.length - 1] ?? null, 1),
        statuses,
      };
    },
  };
}

export async function nodeDownScenario({ workDir, quick }) {
  const measuredAt = new Date().toISOString();
  const found = await dockerNodes(1, { stoppable: true });
  if (!found.ok) {
    log(`node-down: skipped: ${found.why}`);
    return { measuredAt, skipped: found.why };
  }
  const [node] = found.nodes;
  const seconds = quick
    ? { reachable: 4, cutOff: 8, engineStopped: 6 }
    : { reachable: 12, cutOff: 20, engineStopped: 15 };
  const { panel, api, dataDir, logFile } = await scenarioPanel(workDir, 'node-down');
  log(`node-down: panel pid ${panel.pid} on port ${panel.port}, node ${node.name}`);
  const requests = [
    { label: '`GET /api/servers`', path: '/api/servers' },
    {
      label: '`GET /api/servers/{local}/config` (a server’s page)',
      path: `/api/servers/${LOCAL}/config`,
    },
    { label: '`GET /api/servers/{local}/stats`', path: `/api/servers/${LOCAL}/stats` },
    { label: '`GET /api/admin/nodes`', path: '/api/admin/nodes' },
    {
      label: `\`GET /api/servers/{local}/files\` (${LISTED_FILES} files)`,
      path: `/api/servers/${LOCAL}/files?path=many`,
    },
  ];
  let result;
  const teardown = { remoteStop: null, deleteFailed: {}, panelLog: null, leftoversRemoved: null };
  const names = Array.from(
    { length: LOCAL_SERVERS },
    (_, i) => `local-${String(i).padStart(2, '0')}`,
  );
  try {
    await addNode(api, node);
    for (const name of names) await createLocalServer(api, name);
    const many = path.join(dataDir, 'servers', LOCAL, 'many');
    mkdirSync(many);
    for (let i = 0; i < LISTED_FILES; i++) {
      writeFileSync(path.join(many, `file-${String(i).padStart(3, '0')}.dat`), 'x'.repeat(100));
    }
    await createServerOn(api, REMOTE, node, found.gameServerCommand);
    await api.call('POST', `/api/servers/${REMOTE}/start`);
    await waitFor(
      `${REMOTE} running on ${node.name}`,
      async () =>
        statusIn((await api.request('GET', '/api/servers')).body, REMOTE) === 'running'
          ? true
          : undefined,
      { timeoutMs: 60_000, intervalMs: 200 },
    );

    /**
     * One phase: once the machine is quiet, `breakNode()` (if any; the phase's clock starts just
     * before it), then the requests in turn and the poller of the remote server's stats.
     */
    const phase = async (label, duration, breakNode = null) => {
      await waitForQuiet();
      const since = nowMs();
      if (breakNode !== null) await breakNode();
      const brokenInS = round((nowMs() - since) / 1000, 1);
      const seen = { nodeHealth: {}, remoteStatus: {}, markedUnreachableAfterS: null };
      const poll = poller(api, `/api/servers/${REMOTE}/stats`);
      const watch = new ProcessWatch(panel.pid);
      const rows = await requestsInTurn(api, requests, duration, (request, response) => {
        if (request.path === '/api/admin/nodes') {
          const health = healthIn(response.body, node.name) ?? 'missing';
          seen.nodeHealth[health] = (seen.nodeHealth[health] ?? 0) + 1;
          if (health === 'unreachable' && seen.markedUnreachableAfterS === null) {
            seen.markedUnreachableAfterS = round((nowMs() - since) / 1000, 1);
          }
        } else if (request.path === '/api/servers') {
          const status = statusIn(response.body, REMOTE) ?? 'missing';
          seen.remoteStatus[status] = (seen.remoteStatus[status] ?? 0) + 1;
        }
      });
      const usage = watch.stop();
      return {
        label,
        seconds: duration,
        ...(breakNode === null ? {} : { brokenInS }),
        requests: rows.map((row) => ({
          label: row.label,
          path: row.path,
          ...latencyFigures(row.histogram),
          failed: row.failed,
          statuses: row.statuses,
        })),
        remoteStats: await poll.stop(),
        ...seen,
        panelCpuPercent: round(usage.cpuPercent, 0),
        othersCpuPercent: round(usage.othersCpuPercent, 0),
      };
    };
    /** Until the panel says the node answers again (its next check: up to 15 s). */
    const backOnline = async () => {
      const at = nowMs();
      await waitFor(
        `${node.name} online again`,
        async () =>
          healthIn((await api.request('GET', '/api/admin/nodes')).body, node.name) === 'online'
            ? true
            : undefined,
        { timeoutMs: 60_000, intervalMs: 250 },
      );
      return round((nowMs() - at) / 1000, 1);
    };

    log(`node-down: ${node.name} reachable, ${seconds.reachable} s`);
    const reachable = await phase('all nodes reachable', seconds.reachable);

    log(`node-down: ${node.name} cut off, ${seconds.cutOff} s`);
    let cutOff;
    try {
      cutOff = await phase('the node cut off (packets dropped)', seconds.cutOff, () =>
        node.cutOff(),
      );
    } finally {
      await node.reconnect();
    }
    const onlineAfterReconnectS = await backOnline();

    log(`node-down: ${node.name}'s engine stopped, ${seconds.engineStopped} s`);
    let engineStopped;
    try {
      engineStopped = await phase(
        'its engine stopped (connections refused)',
        seconds.engineStopped,
        () => node.stop(),
      );
    } finally {
      await node.start();
    }
    const onlineAfterStartS = await backOnline();
    // The server ran on through both (its container outlives the engine): the panel still has it.
    const remoteStatusAtEnd = statusIn(await api.call('GET', '/api/servers'), REMOTE);

    const versus = (row, base) => ({
      ...row,
      requests: row.requests.map((request, i) => ({
        ...request,
        p50Ratio: round(request.p50Ms / base.requests[i].p50Ms, 2),
        p95Ratio: round(request.p95Ms / base.requests[i].p95Ms, 2),
      })),
    });
    result = {
      measuredAt,
      node: node.name,
      localServers: LOCAL_SERVERS,
      onlineAfterReconnectS,
      onlineAfterStartS,
      remoteStatusAtEnd,
      phases: [reachable, versus(cutOff, reachable), versus(engineStopped, reachable)],
    };
    for (const row of result.phases.slice(1)) {
      const worst = Math.max(...row.requests.map((request) => request.p95Ratio));
      log(
        `node-down: ${row.label}: worst p95 ${worst}× the reachable one; node seen ` +
          `unreachable after ${row.markedUnreachableAfterS} s`,
      );
    }
  } finally {
    // Whatever happened: the node answers again (the fixture's start is a no-op when it runs),
    // and the servers go, the one on the node with its container and volume. Each call is
    // bounded, and what the panel failed to remove is removed from the node afterwards.
    await node.reconnect().catch((error) => log(`node-down: reconnect failed: ${error}`));
    await node.start().catch((error) => log(`node-down: start failed: ${error}`));
    const at = nowMs();
    const stop = await api
      .request('POST', `/api/servers/${REMOTE}/stop`, undefined, { timeoutMs: TEARDOWN_MS })
      .catch(() => ({ status: `no answer in ${TEARDOWN_MS / 1000} s` }));
    teardown.remoteStop = { status: stop.status, ms: round(nowMs() - at, 0) };
    for (const name of [...names, REMOTE]) {
      const gone = await api
        .request('DELETE', `/api/servers/${name}`, undefined, { timeoutMs: TEARDOWN_MS })
        .catch(() => ({ status: `no answer in ${TEARDOWN_MS / 1000} s` }));
      if (gone.status !== 200 && gone.status !== 404) {
        log(`node-down: deleting ${name} answered ${gone.status}`);
        teardown.deleteFailed[name] = gone.status;
      }
    }
    await stopChild(panel.child, 15_000);
    teardown.panelLog = summariseLog(logFile).warningsAndErrors;
    teardown.leftoversRemoved = await removeLeftovers(node, dataDir).catch((error) => {
      log(`node-down: leftovers on ${node.name} could not be removed: ${error}`);
      return String(error);
    });
  }
  log(
    `node-down: stopping ${REMOTE} after its engine's restart answered ` +
      `${teardown.remoteStop.status} in ${teardown.remoteStop.ms} ms; left on the node: ` +
      JSON.stringify(teardown.leftoversRemoved),
  );
  return { ...result, ...teardown };
}
