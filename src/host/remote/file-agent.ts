/**
 * The file agent: the panel's own storage code (src/host/local/storage/) answering the panel
 * over its stdin and stdout (the wire, wire.ts), on a machine the panel does not run on. On a
 * node it runs in a short-lived helper container with only the server's volume mounted, no
 * network, no capabilities, a read-only root, as the server's user (docs/nodes.md, "Files on a
 * node"); scripts/bundle-server.mjs makes it one file, dist/file-agent.mjs, that needs nothing
 * but Node.
 *
 *     node dist/file-agent.mjs <serversDir> [--chown] [--usage-ttl-ms=<ms>]
 *
 * `serversDir` holds a folder per server (on a node: the volume); `--chown` gives what it writes
 * to each folder's owner (only when it runs as root, as tests do). stderr takes its own log,
 * one JSON object a line, paths and reasons only. A bad call is answered with an error and the
 * agent goes on; it exits when its stdin ends, once every call has stopped and every handle and
 * temporary file is let go of.
 */
import { Duplex } from 'node:stream';
import { ServerStorage } from '../local/storage/server-storage.js';
import type { StorageLog } from '../local/storage/types.js';
import { agentMethods } from './agent-methods.js';
import { WireServer } from './wire-server.js';

/** One line of the agent's log on stderr. */
function log(level: 'info' | 'warn' | 'error', message: string, details: object = {}): void {
  const fields = Object.fromEntries(
    Object.entries(details).map(([key, value]) => [
      key,
      value instanceof Error ? { message: value.message, code: codeOf(value) } : value,
    ]),
  );
  process.stderr.write(`${JSON.stringify({ level, msg: message, ...fields })}\n`);
}

const codeOf = (error: Error): unknown => (error as { code?: unknown }).code;

const storageLog: StorageLog = {
  info: (details, message) => {
    log('info', message, details);
  },
  warn: (details, message) => {
    log('warn', message, details);
  },
};

const [serversDir, ...options] = process.argv.slice(2);
if (serversDir === undefined || serversDir.startsWith('-')) {
  process.stderr.write(
    'usage: file-agent <serversDir> [--chown] [--finish-restores] [--usage-ttl-ms=<ms>]\n',
  );
  process.exit(2);
}
const ttl = options.find((option) => option.startsWith('--usage-ttl-ms='))?.split('=')[1];
const storage = new ServerStorage(serversDir, {
  chowns: options.includes('--chown'),
  log: storageLog,
  ...(ttl === undefined ? {} : { usageTtlMs: Number(ttl) }),
});

// A stray rejection in a library is told, never the end of the agent.
process.on('unhandledRejection', (reason) => {
  log('error', 'an unhandled rejection', { err: reason });
});

// In a helper container the volume holds one server's folder and what its restores leave
// beside it: a restore an earlier helper left half done is finished before anything is served.
if (options.includes('--finish-restores')) await storage.finishRestores();

const session = agentMethods(storage);
const server = new WireServer(
  Duplex.from({ readable: process.stdin, writable: process.stdout }),
  session.methods,
  {
    log: (message, error) => {
      log('warn', message, error === undefined ? {} : { err: error });
    },
  },
);
await server.closed;
await session.release();
process.exit(0);
