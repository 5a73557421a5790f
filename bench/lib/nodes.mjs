// What the node scenarios share: real Docker engines standing in for remote nodes, taken from the
// tests' own fixture (test/helpers/docker-nodes.ts, docs/testing.md "Engines as remote nodes")
// through tsx, so the bench never sets up a second kind of node; a panel of the scenario's own
// (dist/panel.mjs on a fresh data directory) with its admin; and a client that times requests.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { tsImport } from 'tsx/esm/api';
import { Histogram } from './histogram.mjs';
import { startPanel } from './panel.mjs';
import { nowMs, round } from './util.mjs';

const PASSWORD = 'benchmark password 1';

/**
 * `count` engines as nodes (`{ stoppable: true }`: nodes 11… leased to this process, which may
 * stop or cut them off), with the command that runs the stand-in game server in their image;
 * or `{ ok: false, why }`, which the scenario reports as skipped.
 */
export async function dockerNodes(count, { stoppable = false } = {}) {
  try {
    const fixture = await tsImport('../../test/helpers/docker-nodes.ts', import.meta.url);
    const docker = await tsImport('../../test/helpers/docker.ts', import.meta.url);
    const found = await fixture.dockerNodesForTests(count, { stoppable });
    if (!found.ok) return found;
    return { ok: true, nodes: found.nodes, gameServerCommand: docker.imageGameServerCommand() };
  } catch (error) {
    return { ok: false, why: error instanceof Error ? error.message : String(error) };
  }
}

/**
 * A panel of the scenario's own, in `<workDir>/<name>` (removed with the work directory), and
 * its first account, the admin: `{ panel, api, token, dataDir, logFile }`.
 */
export async function scenarioPanel(workDir, name) {
  const dir = path.join(workDir, name);
  // The servers' users pass through it to reach the data directory, as through the work directory.
  mkdirSync(dir, { mode: 0o711 });
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'panel.log');
  const panel = await startPanel({ dataDir, logFile });
  const admin = await panel.api.call('POST', '/api/auth/register', {
    username: 'admin',
    password: PASSWORD,
  });
  return {
    panel,
    api: panel.api.as(admin.access_token),
    token: admin.access_token,
    dataDir,
    logFile,
  };
}

/** The id a panel on `dataDir` labels and names its containers and volumes with (src/data-dir.ts). */
const panelIdOf = (dataDir) => createHash('sha256').update(dataDir).digest('hex').slice(0, 12);

/**
 * Once the scenario's panel has stopped: removes from `node` every container and volume that
 * panel left (labelled with its id), so the node keeps nothing of the run but the helper image.
 * Resolves with what it removed; a clean run removes nothing.
 */
export async function removeLeftovers(node, dataDir) {
  const label = `game-panel.panel=${panelIdOf(dataDir)}`;
  const removed = { containers: [], volumes: [] };
  const containers = await node.docker.listContainers({ all: true, filters: { label: [label] } });
  for (const container of containers) {
    await node.docker.getContainer(container.Id).remove({ force: true });
    removed.containers.push(`${container.Names[0] ?? container.Id} (${container.State})`);
  }
  const { Volumes: volumes } = await node.docker.listVolumes({ filters: { label: [label] } });
  for (const volume of volumes ?? []) {
    await node.docker.getVolume(volume.Name).remove();
    removed.volumes.push(volume.Name);
  }
  return removed;
}

/** Adds `node` to the panel as an admin does: its engine's address and the client's TLS. */
export const addNode = (api, node) =>
  api.call(
    'POST',
    '/api/admin/nodes',
    { name: node.name, dockerHost: node.dockerHost, tls: node.tls, publicAddress: node.address },
    201,
  );

/** A server on `node` that runs in a container of the node's test image (not started). */
export const createServerOn = (api, name, node, gameServerCommand) =>
  api.call('POST', '/api/servers/create', {
    name,
    node: node.name,
    runtime: 'docker',
    image: node.image,
    startCommand: gameServerCommand,
    stopCommand: 'stop',
    stopTimeoutSeconds: 5,
  });

/** A server on `local`, run as a process (never started here). */
export const createLocalServer = (api, name) =>
  api.call('POST', '/api/servers/create', {
    name,
    node: 'local',
    startCommand: `${JSON.stringify(process.execPath)} -e ""`,
  });

/**
 * Asks `requests` (`{ label, path }`) one after the other, in turn, for `seconds`: one client,
 * one request at a time, as a user clicking through the UI. Per label: count, statuses other
 * than 200, and the latency of every answer (µs histogram). `onAnswer(request, response)` sees
 * each answer.
 */
export async function requestsInTurn(api, requests, seconds, onAnswer = null) {
  const rows = requests.map((request) => ({
    ...request,
    histogram: new Histogram(),
    failed: 0,
    statuses: {},
  }));
  const deadline = nowMs() + seconds * 1000;
  while (nowMs() < deadline) {
    for (const row of rows) {
      const at = nowMs();
      let status;
      let response = null;
      try {
        response = await api.request('GET', row.path, undefined, { timeoutMs: 60_000 });
        status = response.status;
      } catch {
        status = 'no answer';
      }
      row.histogram.record((nowMs() - at) * 1000);
      if (response !== null && onAnswer !== null) onAnswer(row, response);
      if (status !== 200) {
        row.failed += 1;
        row.statuses[status] = (row.statuses[status] ?? 0) + 1;
      }
    }
  }
  return rows;
}

/** A histogram's figures in ms. */
export const latencyFigures = (histogram) => ({
  requests: histogram.count,
  p50Ms: round(histogram.percentile(50) / 1000, 2),
  p95Ms: round(histogram.percentile(95) / 1000, 2),
  maxMs: round(histogram.max / 1000, 1),
});
