// API overhead: autocannon against three endpoints of the panel, then against a bare Fastify
// route answering the same JSON in another process of the same Node.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { cannon } from '../lib/cannon.mjs';
import { REPO, spawnNode } from '../lib/panel.mjs';
import { ProcessWatch, waitForQuiet } from '../lib/proc.mjs';
import { log, round, stopChild, waitFor } from '../lib/util.mjs';

export const ENDPOINTS = [
  { name: 'GET /api/auth/me', path: '/api/auth/me' },
  { name: 'GET /api/servers (100 servers)', path: '/api/servers' },
  { name: 'GET /api/tickets (1,000 tickets)', path: '/api/tickets' },
];

async function measure({ port, pid, urlPath, token, seconds, warmupSeconds, connections }) {
  await waitForQuiet();
  await cannon({ port, urlPath, token, seconds: warmupSeconds, connections });
  const watch = new ProcessWatch(pid);
  const { result, latency } = await cannon({ port, urlPath, token, seconds, connections });
  const usage = watch.stop();
  const ok = result['2xx'];
  return {
    requestsPerSecond: round(ok / usage.seconds, 0),
    p50Ms: round(latency.percentile(50) / 1000, 2),
    p99Ms: round(latency.percentile(99) / 1000, 2),
    requests: ok,
    errors: result.errors + result.timeouts + result.non2xx,
    cpuPercent: round(usage.cpuPercent, 0),
    othersCpuPercent: round(usage.othersCpuPercent, 0),
  };
}

/**
 * Starts bench/bare-server.mjs answering `bodies`, streaming `file` at /file and taking uploads
 * into `uploadTarget` at /upload.
 */
export async function startBare(workDir, bodies, file, uploadTarget) {
  const routesFile = path.join(workDir, 'bare-routes.json');
  writeFileSync(routesFile, JSON.stringify(bodies));
  const args = [
    path.join(REPO, 'bench', 'bare-server.mjs'),
    routesFile,
    ...(file ? [file] : []),
    ...(uploadTarget ? [uploadTarget] : []),
  ];
  const child = spawnNode(args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let port;
  createInterface({ input: child.stdout }).on('line', (line) => {
    const match = /^listening (\d+)$/.exec(line);
    if (match) port = Number(match[1]);
  });
  await waitFor('the bare Fastify server', () => port, { timeoutMs: 10_000 });
  return { child, port };
}

export async function apiScenario({ panel, token, workDir, seconds, warmupSeconds }) {
  const connections = 10;
  // The bare route answers exactly the bodies the panel answers.
  const bodies = {};
  const sizes = {};
  for (const endpoint of ENDPOINTS) {
    const res = await panel.api.as(token).request('GET', endpoint.path);
    if (res.status !== 200) throw new Error(`${endpoint.path} answered ${res.status}`);
    bodies[endpoint.path] = res.body;
    sizes[endpoint.path] = res.raw.length;
  }
  const bare = await startBare(workDir, bodies);
  const rows = [];
  try {
    for (const endpoint of ENDPOINTS) {
      log(`api: ${endpoint.name}`);
      const common = { urlPath: endpoint.path, seconds, warmupSeconds, connections };
      const panelFigures = await measure({ ...common, port: panel.port, pid: panel.pid, token });
      const bareFigures = await measure({ ...common, port: bare.port, pid: bare.child.pid });
      rows.push({
        endpoint: endpoint.name,
        path: endpoint.path,
        responseBytes: sizes[endpoint.path],
        panel: panelFigures,
        bare: bareFigures,
        throughputRatio: round(panelFigures.requestsPerSecond / bareFigures.requestsPerSecond, 3),
      });
      log(
        `  panel ${panelFigures.requestsPerSecond} req/s (p99 ${panelFigures.p99Ms} ms), ` +
          `bare ${bareFigures.requestsPerSecond} req/s (p99 ${bareFigures.p99Ms} ms)`,
      );
    }
  } finally {
    await stopChild(bare.child, 5_000);
  }
  return { connections, seconds, warmupSeconds, endpoints: rows };
}
