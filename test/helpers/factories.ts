/** Small factories that act through the API, so tests read as what a person does. */
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { TestPanel } from './app.js';

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
  return panel.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { username, password },
  });
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

/** Inserts a server row directly: the server endpoints come with the process runtime. */
export async function createServerRow(panel: TestPanel, name: string): Promise<void> {
  await panel.db.kysely
    .insertInto('servers')
    .values({
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

/** Asserts the DECISIONS.md §2 error body, with status and code. */
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
