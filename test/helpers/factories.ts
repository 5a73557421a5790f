/** Small factories that act through the API, so tests read as what a person does. */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { WebSocket } from 'ws';
import { rememberSecret, type TestPanel } from './app.js';
import { gameServerScript } from './fixture.js';

export const PASSWORD = 'correct horse';

export interface Session {
  readonly username: string;
  readonly token: string;
  readonly role: string;
  readonly headers: { authorization: string };
}

export const bearer = (token: string): { authorization: string } => ({
  authorization: `Bearer ${token}`,
});

/** The success body of every route that answers data: `{ message, data }` (docs/api.md). */
export interface Envelope<T> {
  readonly message: string;
  readonly data: T;
}

// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- a typed view of a test's response body; the caller names the shape it asserts on
export function json<T = Record<string, unknown>>(response: LightMyRequestResponse): T {
  return JSON.parse(response.body) as T;
}

/** Registers `username` and returns its session; the first user of a panel becomes admin. */
export async function register(
  panel: TestPanel,
  username: string,
  password = PASSWORD,
): Promise<Session> {
  const response = await panel.app.inject({
    method: 'POST',
    url: '/api/auth/register',
    payload: { username, password },
  });
  assert.equal(response.statusCode, 200, response.body);
  const body = json<{ access_token: string; role: string; username: string }>(response);
  rememberSecret(password);
  rememberSecret(body.access_token);
  return {
    username: body.username,
    token: body.access_token,
    role: body.role,
    headers: bearer(body.access_token),
  };
}

export async function login(
  panel: TestPanel,
  username: string,
  password = PASSWORD,
): Promise<LightMyRequestResponse> {
  rememberSecret(password);
  const response = await panel.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password },
  });
  if (response.statusCode === 200) {
    rememberSecret(json<{ access_token: string }>(response).access_token);
  }
  return response;
}

/** Sets a user's role as `admin` and checks it worked. */
export async function setRole(
  panel: TestPanel,
  admin: Session,
  username: string,
  role: string,
): Promise<void> {
  const response = await panel.app.inject({
    method: 'PUT',
    url: `/api/users/${username}/role`,
    headers: admin.headers,
    payload: { role },
  });
  assert.equal(response.statusCode, 200, response.body);
}

/** A new server id, as the servers repository takes one (for rows a test inserts itself). */
export async function newServerId(db: Kysely<Database>, name: string): Promise<number> {
  const { id } = await db
    .insertInto('server_ids')
    .values({ name, created_at: new Date().toISOString() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Inserts a server row directly: the server endpoints come with the process runtime. */
export async function createServerRow(panel: TestPanel, name: string): Promise<void> {
  await panel.db.kysely
    .insertInto('servers')
    .values({
      id: await newServerId(panel.db.kysely, name),
      name,
      display_name: name,
      start_command: 'true',
      stop_command: null,
      stop_timeout_seconds: 10,
      auto_restart: 0,
      created_at: new Date().toISOString(),
      desired_running: 0,
      pid: null,
      pid_identity: null,
      started_at: null,
    })
    .execute();
}

/** Asserts the docs/api.md, contract §2 error body, with status and code. */
export function assertError(
  response: LightMyRequestResponse,
  statusCode: number,
  code?: string,
): void {
  assert.equal(response.statusCode, statusCode, response.body);
  const body = json<{ message: unknown; code: unknown; statusCode: unknown }>(response);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.statusCode, statusCode);
  assert.match(String(body.code), /^[A-Z_]+$/);
  if (code !== undefined) assert.equal(body.code, code);
}

/** The stand-in game server of test/fixtures, as a start command (absolute paths, no shell). */
export function gameServerCommand(...flags: string[]): string {
  return [process.execPath, gameServerScript(), ...flags]
    .map((part) => JSON.stringify(part))
    .join(' ');
}

/** Creates a server through the API as `admin`. */
export async function createServer(
  panel: TestPanel,
  admin: Session,
  name: string,
  config: Record<string, unknown> = {},
): Promise<void> {
  const response = await panel.app.inject({
    method: 'POST',
    url: '/api/servers/create',
    headers: admin.headers,
    payload: { name, displayName: name, startCommand: gameServerCommand(), ...config },
  });
  assert.equal(response.statusCode, 200, response.body);
}

/** A request as `session`, with a JSON body when `payload` is given. */
export function request(
  panel: TestPanel,
  session: Session,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  payload?: object,
): Promise<LightMyRequestResponse> {
  return panel.app.inject({
    method,
    url,
    headers: session.headers,
    ...(payload === undefined ? {} : { payload }),
  });
}

/** POSTs a lifecycle action (`start`, `stop`) or a console command for a server. */
export function serverAction(
  panel: TestPanel,
  session: Session,
  name: string,
  action: 'start' | 'stop' | 'restart' | 'kill',
): Promise<LightMyRequestResponse> {
  return panel.app.inject({
    method: 'POST',
    url: `/api/servers/${name}/${action}`,
    headers: session.headers,
  });
}

export function sendCommand(
  panel: TestPanel,
  session: Session,
  name: string,
  command: string,
): Promise<LightMyRequestResponse> {
  return panel.app.inject({
    method: 'POST',
    url: `/api/servers/${name}/command`,
    headers: session.headers,
    payload: { command },
  });
}

export interface ServerStatsBody {
  status: string;
  pid: number | null;
  lastExit: {
    code: number | null;
    signal: string | null;
    outOfMemory: boolean;
    cleanStop: boolean;
    at: string;
  } | null;
  uptimeSeconds: number;
  imageDigest: string | null;
  cpu: { percent: number; limit: number | null };
  memory: { bytes: number; limit: number | null };
  pids: { count: number; limit: number | null };
  disk: { bytes: number; limit: number | null };
}

export async function stats(
  panel: TestPanel,
  session: Session,
  name: string,
): Promise<ServerStatsBody> {
  const response = await panel.app.inject({
    url: `/api/servers/${name}/stats`,
    headers: session.headers,
  });
  assert.equal(response.statusCode, 200, response.body);
  return json<{ data: ServerStatsBody }>(response).data;
}

/** Polls `check` every 25 ms until it returns a value other than undefined, or fails. */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** True while a process with this pid exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The console history a socket receives first: the last lines the server printed. */
export async function historyOf(
  panel: TestPanel,
  session: Session,
  name: string,
): Promise<string[]> {
  const base = await panel.listen();
  const socket = new WebSocket(`${base.replace('http', 'ws')}/ws/servers/${name}/console`, {
    headers: session.headers,
  });
  try {
    const [data] = (await once(socket, 'message')) as [Buffer];
    return (JSON.parse(data.toString()) as { lines: string[] }).lines;
  } finally {
    socket.close();
  }
}

/** The first line of `name`'s console history (through the console socket) that has `text`. */
export function consoleHas(
  panel: TestPanel,
  session: Session,
  name: string,
  text: string,
  timeoutMs?: number,
): Promise<string> {
  return eventually(
    async () =>
      (await historyOf(panel, session, name)).find((line) => line.includes(text)) ?? undefined,
    `"${text}" in the console of ${name}`,
    timeoutMs,
  );
}
