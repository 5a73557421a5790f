// Fills a fresh panel through its API: the admin (first account), users for the console
// sockets (at most 10 sockets per user; made by the admin, then signed in), 100 servers plus
// the ones the scenarios use, and 1,000 tickets with a message on every tenth.
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { quote } from 'shell-quote';
import { REPO } from '../lib/panel.mjs';
import { log, pool } from '../lib/util.mjs';

export const PASSWORD = 'benchmark password 1';
export const SERVER_COUNT = 100;
export const TICKET_COUNT = 1000;
/** 10 users hold the 100 reading sockets; one more holds the socket that never reads. */
export const CONSOLE_USERS = 11;
export const CONSOLE_SERVER = 'console';
export const FILES_SERVER = 'files';

/**
 * The folder a sandboxed server reads the line printer from, shown to it read-only
 * (SANDBOX_READ_ONLY_PATHS): bench/ in place, unless the checkout is under /tmp, which the
 * sandbox replaces with its own; then a folder in the run's work directory (removed with it).
 */
export function printerDir(workDir) {
  const original = path.join(REPO, 'bench');
  return original.startsWith('/tmp/') ? path.join(workDir, 'printer') : original;
}

function printerPath(workDir) {
  const original = path.join(REPO, 'bench', 'line-printer.mjs');
  const copy = path.join(printerDir(workDir), 'line-printer.mjs');
  if (copy !== original && !existsSync(copy)) {
    mkdirSync(path.dirname(copy), { recursive: true, mode: 0o755 });
    copyFileSync(original, copy);
  }
  return copy;
}

export const printerCommand = (workDir) => quote([process.execPath, printerPath(workDir)]);

export async function seed(api, workDir) {
  const admin = await api.call('POST', '/api/auth/register', {
    username: 'admin',
    password: PASSWORD,
  });
  if (admin.role !== 'admin') throw new Error('the first account did not become admin');
  const asAdmin = api.as(admin.access_token);

  const started = performance.now();
  const names = Array.from(
    { length: SERVER_COUNT },
    (_, i) => `server-${String(i).padStart(3, '0')}`,
  );
  await pool(
    8,
    [...names, CONSOLE_SERVER, FILES_SERVER].map(
      (name) => () =>
        asAdmin.call('POST', '/api/servers/create', {
          name,
          displayName: `Server ${name}`,
          startCommand: printerCommand(workDir),
          stopCommand: 'stop',
          stopTimeoutSeconds: 2,
        }),
    ),
  );

  const users = await pool(
    4,
    Array.from({ length: CONSOLE_USERS }, (_, i) => async () => {
      const username = `player${String(i).padStart(2, '0')}`;
      // Made by the admin: registration closes once the first account exists.
      await asAdmin.call('POST', '/api/users', { username, role: 'user', password: PASSWORD }, 201);
      await asAdmin.call('PUT', `/api/users/${username}/servers`, { servers: [CONSOLE_SERVER] });
      const user = await api.call('POST', '/api/auth/login', { username, password: PASSWORD });
      return { username, token: user.access_token };
    }),
  );

  const tickets = await pool(
    10,
    Array.from({ length: TICKET_COUNT }, (_, i) => async () => {
      const owner = api.as(users[i % 10].token);
      const ticket = await owner.call('POST', '/api/tickets/create', {
        title: `Server ${i % SERVER_COUNT} does not start after the update (#${i})`,
        description:
          'Since this morning the server stops right after loading the world. ' +
          'The console shows an error about a missing plugin; I did not change anything.',
      });
      if (i % 10 === 0) {
        await asAdmin.call('POST', `/api/tickets/${ticket.data.id}/message`, {
          text: 'Thanks, we are looking into it.',
        });
      }
      return ticket.data.id;
    }),
  );
  log(
    `seeded ${SERVER_COUNT + 2} servers, ${users.length + 1} users and ${tickets.length} tickets ` +
      `in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  return { adminToken: admin.access_token, users };
}
