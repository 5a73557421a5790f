/**
 * The access matrix: every protected route (REST and the console socket) against every kind of
 * caller, from one table. Each row names a route exactly as Fastify registered it, a valid request
 * for it, and the status each caller must get. The table is compared with the routes the panel
 * registered, so a route added without a row (or a row left behind by a removed route) fails.
 *
 * Every cell is its own request against a real panel. Rows whose request uses up its target
 * (deleting a server, a user, a file) make a fresh one before each cell with `setup`, run as the
 * admin; the others are idempotent, so no cell depends on what an earlier one did.
 */
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { before, describe, it } from 'node:test';
import { SignJWT, base64url, type JWTPayload } from 'jose';
import WebSocket from 'ws';
import { SERVER_PERMISSIONS, type ServerPermission } from '../src/domain/policy.js';
import { newEd25519Pair } from '../src/modules/sftp/host-key.js';
import {
  TEST_JWT_SECRET,
  rememberSecret,
  startPanel,
  suiteScope,
  type TestPanel,
} from './helpers/app.js';
import {
  PASSWORD,
  bearer,
  createServer,
  eventually,
  gameServerCommand,
  json,
  register,
  setRole,
} from './helpers/factories.js';

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * The expected status for each kind of caller, in this order:
 *   anon  no token at all
 *   bad   a bad token (both a garbage string and a well-formed token signed with the wrong secret)
 *   ban   a banned user, with the server in their list
 *   none  a user without access (empty server list, owns no ticket)
 *   with  a user with access (the server in their list, owns the ticket)
 *   sup   support, with the server in their list
 *   sup0  support, without the server in their list
 *   admin admin
 * 101 on the console socket means the socket opened.
 */
type Statuses = readonly [
  anon: number,
  bad: number,
  ban: number,
  none: number,
  withAccess: number,
  sup: number,
  sup0: number,
  admin: number,
];

interface Caller {
  readonly name: string;
  /** Which of a row's statuses applies. */
  readonly column: number;
  /** The username a request about oneself names (renaming oneself). */
  readonly username: string;
  /** `undefined`: no Authorization header. Replaced when a password change hands out a new one. */
  token: string | undefined;
  /** A permission caller: what it holds on SERVER (one permission, or none). */
  readonly holds?: readonly ServerPermission[];
  /** An admin's API key narrowed to servers: to SERVER alone, or to none at all. */
  readonly key?: 'narrowed' | 'empty';
}

/** What a row's request builder is given: the shared state, the caller and the setup's result. */
interface Cell {
  readonly world: World;
  readonly caller: Caller;
  /** What the row's `setup` made for this cell (a name), or ''. */
  readonly made: string;
}

interface Req {
  /** Values for the pattern's `:params`; by default the shared server, ticket and target user. */
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: string;
  readonly payload?: string | object;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Row {
  readonly method: Method;
  /** The route pattern, exactly as registered. */
  readonly url: string;
  readonly expect: Statuses;
  readonly request: (cell: Cell) => Req;
  /** Runs as admin before every cell; what it answers is the cell's `made`. */
  readonly setup?: (world: World) => Promise<string>;
  /** Another case of the same route (an admin-only field, where the token goes). */
  readonly variant?: string;
  /** The console socket: opened with a WebSocket client, the token in this place. */
  readonly socket?: 'header' | 'query';
  /** A 200 carries the caller's new token (a password change revokes the old one). */
  readonly renewsToken?: boolean;
}

type RowOptions = Pick<Row, 'setup' | 'variant' | 'socket' | 'renewsToken'>;

function row(
  method: Method,
  url: string,
  expect: Statuses,
  request: Req | ((cell: Cell) => Req) = {},
  options: RowOptions = {},
): Row {
  return {
    method,
    url,
    expect,
    request: typeof request === 'function' ? request : () => request,
    ...options,
  };
}

const SERVER = 'matrix';
/** A user no caller is: the target of the admin's user routes and of others' statistics. */
const TARGET_USER = 'bystander';
const FILE = 'matrix.txt';
const BOUNDARY = '----access-matrix-boundary';

const upload: Req = {
  query: 'path=',
  headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
  payload: [
    `--${BOUNDARY}`,
    'Content-Disposition: form-data; name="file"; filename="uploaded.txt"',
    'Content-Type: text/plain',
    '',
    'uploaded by the access matrix',
    `--${BOUNDARY}--`,
    '',
  ].join('\r\n'),
};

// Setups, run as admin before each cell of their row.
const fresh = (prefix: string) => (world: World) => Promise.resolve(world.unique(prefix));
const freshFile = (prefix: string) => async (world: World) => {
  const name = world.unique(prefix);
  await world.writeFile(name);
  return name;
};
/** A fresh zip in SERVER's folder holding one file, whose own copy is gone (nothing clashes). */
const freshArchive = async (world: World) => {
  const name = world.unique('archive');
  await world.writeFile(name);
  const files = `/api/servers/${SERVER}/files`;
  await world.asAdmin('POST', `${files}/compress`, {
    paths: [name],
    destination: `${name}.zip`,
    format: 'zip',
  });
  await world.asAdmin('POST', `${files}/delete`, { paths: [name] });
  return `${name}.zip`;
};
/** A fresh file, and a fresh folder named after it with `.dir` to move it into. */
const freshFileAndFolder = async (world: World) => {
  const name = world.unique('bulkmove');
  await world.writeFile(name);
  await world.asAdmin('POST', `/api/servers/${SERVER}/files/create`, {
    type: 'folder',
    name: `${name}.dir`,
    path: '',
  });
  return name;
};
const throwawayUser = async (world: World) => {
  const name = world.unique('gone');
  await register(world.panel, name);
  return name;
};
/** A fresh user who has SERVER, with no permission on it. */
const throwawayHolder = async (world: World) => {
  const name = await throwawayUser(world);
  await world.asAdmin('PUT', `/api/servers/${SERVER}/users/${name}`, { permissions: [] });
  return name;
};
/** A server in the lists of the banned user, the user with access and support, like SERVER. */
const throwawayServer = async (world: World) => {
  const name = world.unique('gone');
  await createServer(world.panel, world.adminSession(), name);
  await world.grant([SERVER, name]);
  return name;
};
/** A minimal egg named and identified by `name`. */
const egg = (name: string) => ({
  meta: { version: 'PTDL_v2' },
  uuid: name,
  name,
  docker_images: { Debian: 'debian:12' },
  startup: './run',
  config: { files: '{}', startup: '{}', logs: '{}', stop: 'stop' },
  variables: [],
});
const throwawayTemplate = async (world: World) => {
  const response = await world.panel.app.inject({
    method: 'POST',
    url: '/api/templates/import',
    headers: world.adminSession().headers,
    payload: egg(world.unique('template')),
  });
  assert.equal(response.statusCode, 200, response.body);
  return (JSON.parse(response.body) as { data: { id: string } }).data.id;
};
/** A new Ed25519 public key: each cell adds its own, never one its account holds already. */
const freshSshKey = (): string => newEd25519Pair().public;
/** A schedule of SERVER that runs only when asked (its id). */
const SCHEDULE = {
  name: 'matrix',
  cron: '0 0 1 1 *',
  tasks: [{ action: 'command', payload: 'say access matrix' }],
};
const throwawaySchedule = async (world: World) => {
  const data = (await world.asAdmin('POST', `/api/servers/${SERVER}/schedules`, SCHEDULE)) as {
    id: number;
  };
  return String(data.id);
};
const scheduleOf = (c: Cell): Req => ({ params: { id: c.made } });
/** Waits until no backup or restore of SERVER is under way (one at a time per server). */
const idleBackups = async (world: World) => {
  await eventually(async () => {
    const backups = (await world.asAdmin('GET', `/api/servers/${SERVER}/backups`)) as {
      status: string;
      lastRestore: { status: string } | null;
      progress: unknown;
    }[];
    // A job ends a moment after its record says so (retention, releasing the server).
    const busy = backups.some(
      (b) => b.status === 'running' || b.lastRestore?.status === 'running' || b.progress !== null,
    );
    return busy ? undefined : true;
  }, 'the backups of the shared server to end');
  return '';
};
/** A finished backup of SERVER (its id). */
const throwawayBackup = async (world: World) => {
  await idleBackups(world);
  const data = (await world.asAdmin('POST', `/api/servers/${SERVER}/backups`, {})) as {
    id: string;
  };
  await idleBackups(world);
  return data.id;
};
const stoppedWithBackup = async (world: World) => {
  await world.ensureStopped();
  return throwawayBackup(world);
};
const backupOf = (c: Cell): Req => ({ params: { id: c.made } });
/** SERVER's retention and save commands back to none: a change of either needs more. */
const resetSettings = async (world: World) => {
  await world.asAdmin('PUT', `/api/servers/${SERVER}/backup-settings`, {
    keepLast: null,
    beforeCommands: [],
  });
  return '';
};
/** Where the matrix's webhooks point: allowed by WEBHOOK_ALLOWED_HOSTS (nothing listens there). */
const WEBHOOK = { url: 'http://127.0.0.1:9/matrix', events: ['server.started'] };
/** A webhook (its id). */
const throwawayWebhook = async (world: World) => {
  const response = await world.panel.app.inject({
    method: 'POST',
    url: '/api/admin/webhooks',
    headers: world.adminSession().headers,
    payload: WEBHOOK,
  });
  assert.equal(response.statusCode, 200, response.body);
  return String(json<{ data: { webhook: { id: number } } }>(response).data.webhook.id);
};
const webhookOf = (c: Cell): Req => ({ params: { id: c.made } });
/** A listed registry (its host), without credentials. */
const throwawayRegistry = async (world: World) => {
  const host = `${world.unique('registry')}.example`;
  await world.asAdmin('POST', '/api/admin/registries', { host });
  return host;
};
const registryOf = (c: Cell): Req => ({ params: { host: c.made } });
const running = async (world: World) => {
  await world.ensureRunning();
  return '';
};
const stopped = async (world: World) => {
  await world.ensureStopped();
  return '';
};

// The table: one row per protected route; a route with a `variant` row is checked in two cases.
// Columns: see Statuses.
// prettier-ignore
const MATRIX: readonly Row[] = [
  //  method    route, as registered                           anon bad  ban  none with sup  sup0 admin
  row('GET',    '/api/auth/me',                               [401, 401, 200, 200, 200, 200, 200, 200]),

  row('GET',    '/api/users',                                 [401, 401, 403, 403, 403, 200, 200, 200]),
  row('POST',   '/api/users',                                 [401, 401, 403, 403, 403, 403, 403, 201], (c) => ({ payload: { username: c.made, role: 'user' } }), { setup: fresh('made') }),
  row('PUT',    '/api/users/:username/password',              [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ params: { username: c.made }, payload: { link: true } }), { setup: throwawayUser }),
  // Two-factor sign-in is off for everyone here: the admin gets as far as 409.
  row('DELETE', '/api/users/:username/2fa',                   [401, 401, 403, 403, 403, 403, 403, 409]),
  row('PUT',    '/api/users/:username/role',                  [401, 401, 403, 403, 403, 403, 403, 200], { payload: { role: 'user' } }),
  row('PUT',    '/api/users/:username/servers',               [401, 401, 403, 403, 403, 403, 403, 200], { payload: { servers: [SERVER] } }),
  row('DELETE', '/api/users/:username',                       [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ params: { username: c.made } }), { setup: throwawayUser }),

  row('GET',    '/api/profile/stats',                         [401, 401, 403, 200, 200, 200, 200, 200]),
  row('GET',    '/api/profile/stats/:username',               [401, 401, 403, 403, 403, 200, 200, 200]),
  row('PUT',    '/api/profile/username',                      [401, 401, 403, 200, 200, 200, 200, 200], (c) => ({ payload: { new_username: c.caller.username, password: PASSWORD } })),
  row('PUT',    '/api/profile/password',                      [401, 401, 403, 200, 200, 200, 200, 200], { payload: { old_password: PASSWORD, new_password: PASSWORD, revokeApiKeys: false } }, { renewsToken: true }),

  // Two-factor sign-in, while it is off for everyone: the steps that need it on answer 409.
  row('GET',    '/api/profile/2fa',                           [401, 401, 403, 200, 200, 200, 200, 200]),
  row('POST',   '/api/profile/2fa/enable',                    [401, 401, 403, 409, 409, 409, 409, 409], { payload: { code: '000000' } }),
  row('POST',   '/api/profile/2fa/disable',                   [401, 401, 403, 409, 409, 409, 409, 409], { payload: { password: PASSWORD, code: '000000' } }),
  row('POST',   '/api/profile/2fa/recovery-codes',            [401, 401, 403, 409, 409, 409, 409, 409], { payload: { password: PASSWORD, code: '000000' } }),
  row('POST',   '/api/profile/2fa/setup',                     [401, 401, 403, 200, 200, 200, 200, 200], { payload: { password: PASSWORD } }),
  row('GET',    '/api/admin/two-factor',                      [401, 401, 403, 403, 403, 403, 403, 200]),
  row('PUT',    '/api/admin/two-factor',                      [401, 401, 403, 403, 403, 403, 403, 200], { payload: { requiredFor: [] } }),

  // API keys: one's own (a key of someone else's, or none, is 404).
  row('GET',    '/api/profile/api-keys',                      [401, 401, 403, 200, 200, 200, 200, 200]),
  row('POST',   '/api/profile/api-keys',                      [401, 401, 403, 200, 200, 200, 200, 200], { payload: { name: 'access matrix', password: PASSWORD } }),
  row('DELETE', '/api/profile/api-keys/:id',                  [401, 401, 403, 404, 404, 404, 404, 404], { params: { id: '2147483647' } }),
  row('GET',    '/api/profile/ssh-keys',                      [401, 401, 403, 200, 200, 200, 200, 200]),
  row('POST',   '/api/profile/ssh-keys',                      [401, 401, 403, 201, 201, 201, 201, 201], () => ({ payload: { name: 'access matrix', publicKey: freshSshKey(), password: PASSWORD } })),
  row('DELETE', '/api/profile/ssh-keys/:id',                  [401, 401, 403, 404, 404, 404, 404, 404], { params: { id: '2147483647' } }),
  row('GET',    '/api/sftp',                                  [401, 401, 403, 200, 200, 200, 200, 200]),

  row('GET',    '/api/audit',                                 [401, 401, 403, 403, 403, 403, 403, 200]),
  row('GET',    '/api/servers/:server/audit',                 [401, 401, 403, 403, 200, 200, 403, 200]),
  row('GET',    '/api/admin/settings',                        [401, 401, 403, 403, 403, 403, 403, 200]),
  row('PUT',    '/api/admin/settings',                        [401, 401, 403, 403, 403, 403, 403, 200], { payload: { backupDefaults: { maxCount: 10 } } }),
  row('GET',    '/api/admin/registries',                      [401, 401, 403, 403, 403, 403, 403, 200]),
  row('GET',    '/api/servers/allocations/free',              [401, 401, 403, 403, 403, 403, 403, 200]),
  row('PUT',    '/api/admin/registries',                      [401, 401, 403, 403, 403, 403, 403, 200], { payload: { restricted: false } }),
  row('POST',   '/api/admin/registries',                      [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ payload: { host: `${c.made}.example`, username: 'puller', password: 'matrix-password' } }), { setup: fresh('registry') }),
  row('PUT',    '/api/admin/registries/:host',                [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ ...registryOf(c), payload: { username: 'puller', password: 'matrix-password' } }), { setup: throwawayRegistry }),
  row('DELETE', '/api/admin/registries/:host',                [401, 401, 403, 403, 403, 403, 403, 200], registryOf, { setup: throwawayRegistry }),
  row('GET',    '/api/admin/nodes',                           [401, 401, 403, 403, 403, 403, 403, 200]),
  // No engine answers here: the admin's request gets as far as the check of its certificates.
  row('POST',   '/api/admin/nodes',                           [401, 401, 403, 403, 403, 403, 403, 400], { payload: { name: 'matrix', dockerHost: 'tcp://127.0.0.1:1', tls: { ca: 'no', cert: 'no', key: 'no' }, publicAddress: '127.0.0.1' } }),
  row('GET',    '/api/admin/nodes/:name',                     [401, 401, 403, 403, 403, 403, 403, 200], { params: { name: 'local' } }),
  row('PUT',    '/api/admin/nodes/:name',                     [401, 401, 403, 403, 403, 403, 403, 200], { params: { name: 'local' }, payload: { maintenance: false } }),
  row('DELETE', '/api/admin/nodes/:name',                     [401, 401, 403, 403, 403, 403, 403, 404], { params: { name: 'nowhere' } }),
  row('GET',    '/api/admin/webhooks',                        [401, 401, 403, 403, 403, 403, 403, 200]),
  row('POST',   '/api/admin/webhooks',                        [401, 401, 403, 403, 403, 403, 403, 200], { payload: WEBHOOK }),
  row('GET',    '/api/admin/webhooks/:id',                    [401, 401, 403, 403, 403, 403, 403, 200], webhookOf, { setup: throwawayWebhook }),
  row('PUT',    '/api/admin/webhooks/:id',                    [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ ...webhookOf(c), payload: { description: 'changed' } }), { setup: throwawayWebhook }),
  row('DELETE', '/api/admin/webhooks/:id',                    [401, 401, 403, 403, 403, 403, 403, 200], webhookOf, { setup: throwawayWebhook }),
  row('POST',   '/api/admin/webhooks/:id/secret',             [401, 401, 403, 403, 403, 403, 403, 200], webhookOf, { setup: throwawayWebhook }),
  row('POST',   '/api/admin/webhooks/:id/test',               [401, 401, 403, 403, 403, 403, 403, 200], webhookOf, { setup: throwawayWebhook }),
  row('GET',    '/api/admin/webhooks/:id/deliveries',         [401, 401, 403, 403, 403, 403, 403, 200], webhookOf, { setup: throwawayWebhook }),

  row('GET',    '/api/servers',                               [401, 401, 403, 200, 200, 200, 200, 200]),
  row('POST',   '/api/servers/create',                        [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ payload: { name: c.made, startCommand: 'true' } }), { setup: fresh('made') }),
  row('GET',    '/api/servers/:server/config',                [401, 401, 403, 403, 200, 200, 403, 200]),
  row('PUT',    '/api/servers/:server/config',                [401, 401, 403, 403, 200, 200, 403, 200], { payload: { displayName: 'Access matrix', autoRestart: false } }),
  row('PUT',    '/api/servers/:server/config',                [401, 401, 403, 403, 403, 403, 403, 200], () => ({ payload: { startCommand: gameServerCommand() } }), { variant: 'startCommand' }),
  row('DELETE', '/api/servers/:server',                       [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ params: { server: c.made } }), { setup: throwawayServer }),
  row('POST',   '/api/servers/:server/start',                 [401, 401, 403, 403, 200, 200, 403, 200], {}, { setup: stopped }),
  row('POST',   '/api/servers/:server/stop',                  [401, 401, 403, 403, 200, 200, 403, 200], {}, { setup: running }),
  row('POST',   '/api/servers/:server/restart',               [401, 401, 403, 403, 200, 200, 403, 200], {}, { setup: running }),
  row('POST',   '/api/servers/:server/kill',                  [401, 401, 403, 403, 200, 200, 403, 200], {}, { setup: running }),
  // The shared server has no template: it has no variables to change and nothing to install.
  row('GET',    '/api/servers/:server/variables',             [401, 401, 403, 403, 200, 200, 403, 200]),
  row('PUT',    '/api/servers/:server/variables',             [401, 401, 403, 403, 409, 409, 403, 409], { payload: { variables: { MOTD: 'x' } } }),
  row('PUT',    '/api/servers/:server/allocations',           [401, 401, 403, 403, 403, 403, 403, 200], { payload: { allocations: [] } }),
  row('GET',    '/api/servers/:server/allocations/free',      [401, 401, 403, 403, 403, 403, 403, 200]),
  row('PUT',    '/api/servers/:server/owner',                 [401, 401, 403, 403, 403, 403, 403, 200], { payload: { owner: null } }),
  row('POST',   '/api/servers/:server/install',               [401, 401, 403, 403, 409, 409, 403, 409], {}, { setup: stopped }),
  row('PUT',    '/api/servers/:server/install',               [401, 401, 403, 403, 403, 403, 403, 200], { payload: { state: 'installed' } }, { setup: stopped }),
  // Nor any egg feature: no EULA to accept, no template image to choose.
  row('POST',   '/api/servers/:server/eula',                  [401, 401, 403, 403, 409, 409, 403, 409], {}, { setup: stopped }),
  row('GET',    '/api/servers/:server/image',                 [401, 401, 403, 403, 200, 200, 403, 200]),
  row('PUT',    '/api/servers/:server/image',                 [401, 401, 403, 403, 409, 409, 403, 409], { payload: { image: 'example/game:1' } }),
  row('POST',   '/api/servers/:server/command',               [401, 401, 403, 403, 200, 200, 403, 200], { payload: { command: 'say access matrix' } }, { setup: running }),
  row('GET',    '/api/servers/:server/stats',                 [401, 401, 403, 403, 200, 200, 403, 200]),
  // The panel here has `local` only, the server's own node: the admin gets as far as 409.
  row('GET',    '/api/servers/:server/transfer',              [401, 401, 403, 403, 200, 200, 403, 200]),
  row('POST',   '/api/servers/:server/transfer',              [401, 401, 403, 403, 403, 403, 403, 409], { payload: { node: 'local' } }),
  row('DELETE', '/api/servers/:server/transfer',              [401, 401, 403, 403, 403, 403, 403, 409]),
  row('GET',    '/api/servers/:server/users',                 [401, 401, 403, 403, 200, 200, 403, 200]),
  row('PUT',    '/api/servers/:server/users/:username',       [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ params: { username: c.made }, payload: { permissions: [] } }), { setup: throwawayUser }),
  row('DELETE', '/api/servers/:server/users/:username',       [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ params: { username: c.made } }), { setup: throwawayHolder }),

  row('GET',    '/api/servers/:server/schedules',             [401, 401, 403, 403, 200, 200, 403, 200]),
  row('POST',   '/api/servers/:server/schedules',             [401, 401, 403, 403, 200, 200, 403, 200], { payload: SCHEDULE }),
  row('GET',    '/api/servers/:server/schedules/:id',         [401, 401, 403, 403, 200, 200, 403, 200], scheduleOf, { setup: throwawaySchedule }),
  row('PUT',    '/api/servers/:server/schedules/:id',         [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ ...scheduleOf(c), payload: { name: 'renamed', enabled: false } }), { setup: throwawaySchedule }),
  row('DELETE', '/api/servers/:server/schedules/:id',         [401, 401, 403, 403, 200, 200, 403, 200], scheduleOf, { setup: throwawaySchedule }),
  row('POST',   '/api/servers/:server/schedules/:id/run',     [401, 401, 403, 403, 200, 200, 403, 200], scheduleOf, { setup: throwawaySchedule }),
  row('GET',    '/ws/servers/:server/console',                [401, 401, 403, 403, 101, 101, 403, 101], {}, { socket: 'header' }),
  row('GET',    '/ws/servers/:server/console',                [401, 401, 403, 403, 101, 101, 403, 101], {}, { socket: 'query', variant: 'token in the query' }),

  row('GET',    '/api/servers/:server/backups',               [401, 401, 403, 403, 200, 200, 403, 200]),
  row('POST',   '/api/servers/:server/backups',               [401, 401, 403, 403, 200, 200, 403, 200], { payload: {} }, { setup: idleBackups }),
  row('GET',    '/api/servers/:server/backups/:id',           [401, 401, 403, 403, 200, 200, 403, 200], backupOf, { setup: throwawayBackup }),
  row('GET',    '/api/servers/:server/backups/:id/download',  [401, 401, 403, 403, 200, 200, 403, 200], backupOf, { setup: throwawayBackup }),
  row('POST',   '/api/servers/:server/backups/:id/download-link', [401, 401, 403, 403, 200, 200, 403, 200], backupOf, { setup: throwawayBackup }),
  row('POST',   '/api/servers/:server/backups/:id/restore',   [401, 401, 403, 403, 200, 200, 403, 200], backupOf, { setup: stoppedWithBackup }),
  row('PUT',    '/api/servers/:server/backups/:id/lock',      [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ ...backupOf(c), payload: { locked: false } }), { setup: throwawayBackup }),
  row('DELETE', '/api/servers/:server/backups/:id',           [401, 401, 403, 403, 200, 200, 403, 200], backupOf, { setup: throwawayBackup }),
  row('GET',    '/api/servers/:server/backup-settings',       [401, 401, 403, 403, 200, 200, 403, 200]),
  row('PUT',    '/api/servers/:server/backup-settings',       [401, 401, 403, 403, 200, 200, 403, 200], { payload: { keepLast: null } }),
  row('PUT',    '/api/servers/:server/backup-settings',       [401, 401, 403, 403, 200, 200, 403, 200], { payload: { keepLast: 3 } }, { variant: 'retention', setup: resetSettings }),
  row('PUT',    '/api/servers/:server/backup-settings',       [401, 401, 403, 403, 200, 200, 403, 200], { payload: { beforeCommands: ['say matrix'] } }, { variant: 'save commands', setup: resetSettings }),
  row('PUT',    '/api/servers/:server/backup-settings',       [401, 401, 403, 403, 403, 403, 403, 200], { payload: { maxCount: null } }, { variant: 'limits' }),

  row('GET',    '/api/servers/:server/files',                 [401, 401, 403, 403, 200, 200, 403, 200], { query: 'path=' }),
  row('GET',    '/api/servers/:server/config-files',          [401, 401, 403, 403, 200, 200, 403, 200], { query: 'path=server.properties' }),
  row('POST',   '/api/servers/:server/files/create',          [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { type: 'folder', name: c.made, path: '' } }), { setup: fresh('folder') }),
  row('POST',   '/api/servers/:server/files/upload',          [401, 401, 403, 403, 200, 200, 403, 200], upload),
  row('GET',    '/api/servers/:server/files/download',        [401, 401, 403, 403, 200, 200, 403, 200], { query: `path=${FILE}` }),
  row('POST',   '/api/servers/:server/files/download-link',   [401, 401, 403, 403, 200, 200, 403, 200], { payload: { path: FILE } }),
  row('GET',    '/api/servers/:server/files/content',         [401, 401, 403, 403, 200, 200, 403, 200], { query: `path=${FILE}` }),
  row('PUT',    '/api/servers/:server/files/content',         [401, 401, 403, 403, 200, 200, 403, 200], { query: `path=${FILE}`, payload: { content: 'access matrix\n' } }),
  row('PUT',    '/api/servers/:server/files/rename',          [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ query: `old_path=${c.made}&new_name=${c.made}.renamed` }), { setup: freshFile('rename') }),
  row('POST',   '/api/servers/:server/files/move',            [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { source: c.made, destination: `${c.made}.moved` } }), { setup: freshFile('move') }),
  row('DELETE', '/api/servers/:server/files',                 [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ query: `path=${c.made}` }), { setup: freshFile('delete') }),
  row('POST',   '/api/servers/:server/files/delete',          [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { paths: [c.made] } }), { setup: freshFile('bulkdelete') }),
  row('POST',   '/api/servers/:server/files/move-many',       [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { paths: [c.made], destination: `${c.made}.dir` } }), { setup: freshFileAndFolder }),
  row('POST',   '/api/servers/:server/files/compress',        [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { paths: [FILE], destination: `${c.made}.tar.gz`, format: 'tar.gz' } }), { setup: fresh('compressed') }),
  row('POST',   '/api/servers/:server/files/decompress',      [401, 401, 403, 403, 200, 200, 403, 200], (c) => ({ payload: { path: c.made, destination: '' } }), { setup: freshArchive }),

  row('GET',    '/api/templates',                             [401, 401, 403, 200, 200, 200, 200, 200]),
  row('GET',    '/api/templates/:id',                         [401, 401, 403, 200, 200, 200, 200, 200], { params: { id: 'generic-command' } }),
  row('POST',   '/api/templates/import',                      [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ payload: egg(c.made) }), { setup: fresh('egg') }),
  row('DELETE', '/api/templates/:id',                         [401, 401, 403, 403, 403, 403, 403, 200], (c) => ({ params: { id: c.made } }), { setup: throwawayTemplate }),

  row('GET',    '/api/tickets',                               [401, 401, 403, 200, 200, 200, 200, 200]),
  row('POST',   '/api/tickets/create',                        [401, 401, 403, 200, 200, 200, 200, 200], { payload: { title: 'Access matrix', description: 'Opened by the access matrix' } }),
  row('GET',    '/api/tickets/:id',                           [401, 401, 403, 404, 200, 200, 200, 200]),
  row('GET',    '/api/tickets/:id/messages',                  [401, 401, 403, 404, 200, 200, 200, 200], { query: 'limit=10' }),
  row('GET',    '/api/tickets/:id/history',                   [401, 401, 403, 404, 200, 200, 200, 200], { query: 'limit=10' }),
  row('POST',   '/api/tickets/:id/message',                   [401, 401, 403, 404, 200, 200, 200, 200], { payload: { text: 'A message from the access matrix' } }),
  row('PUT',    '/api/tickets/:id/status',                    [401, 401, 403, 403, 403, 200, 200, 200], { payload: { status: 'in_progress' } }),
];

/**
 * What each route of one server needs beyond seeing it (`view`): a permission, or being an admin
 * (`admin`). The permission callers (a user and a support member per permission, and one each
 * with none) are judged by it: the status of the full-access column of their role when they hold
 * what the route needs, else 403. Every server route must be here (checked below).
 */
/**
 * What each route of one server needs beyond seeing it (`view`): a permission, every one of a
 * list of permissions, any backups permission (`backups.*`), or being an admin (`admin`). The
 * permission callers (a user and a support member per permission and per pair of `PAIRS`, and
 * one each with none) are judged by it: the status of the full-access column of their role when
 * they hold what the route needs, else 403. Every server route must be here (checked below).
 */
type Need = ServerPermission | readonly ServerPermission[] | 'backups.*' | 'view' | 'admin';
// prettier-ignore
const NEEDS: Readonly<Record<string, Need>> = {
  'GET /api/servers/:server/config': 'view',
  'PUT /api/servers/:server/config': 'settings',
  'PUT /api/servers/:server/config (startCommand)': 'admin',
  'DELETE /api/servers/:server': 'admin',
  'POST /api/servers/:server/start': 'power',
  'POST /api/servers/:server/stop': 'power',
  'POST /api/servers/:server/restart': 'power',
  'POST /api/servers/:server/kill': 'power',
  'GET /api/servers/:server/variables': 'settings',
  'GET /api/servers/:server/config-files': 'files.read',
  'PUT /api/servers/:server/variables': 'settings',
  'PUT /api/servers/:server/allocations': 'admin',
  'GET /api/servers/:server/allocations/free': 'admin',
  'PUT /api/servers/:server/owner': 'admin',
  'POST /api/servers/:server/install': 'settings',
  'PUT /api/servers/:server/install': 'admin',
  'POST /api/servers/:server/eula': ['files.write', 'power'],
  'GET /api/servers/:server/image': 'settings',
  'PUT /api/servers/:server/image': 'settings',
  'POST /api/servers/:server/command': 'console.write',
  'GET /api/servers/:server/stats': 'view',
  'GET /api/servers/:server/transfer': 'view',
  'POST /api/servers/:server/transfer': 'admin',
  'DELETE /api/servers/:server/transfer': 'admin',
  'GET /api/servers/:server/users': 'users',
  'PUT /api/servers/:server/users/:username': 'users',
  'DELETE /api/servers/:server/users/:username': 'users',
  // SCHEDULE has a command task: making, changing (its author becomes the caller) or running it
  // needs console.write too.
  'GET /api/servers/:server/schedules': 'schedules',
  'POST /api/servers/:server/schedules': ['schedules', 'console.write'],
  'GET /api/servers/:server/schedules/:id': 'schedules',
  'PUT /api/servers/:server/schedules/:id': ['schedules', 'console.write'],
  'DELETE /api/servers/:server/schedules/:id': 'schedules',
  'POST /api/servers/:server/schedules/:id/run': ['schedules', 'console.write'],
  'GET /ws/servers/:server/console': 'console.read',
  'GET /ws/servers/:server/console (token in the query)': 'console.read',
  'GET /api/servers/:server/backups': 'backups.*',
  'POST /api/servers/:server/backups': 'backups.create',
  'GET /api/servers/:server/backups/:id': 'backups.*',
  'GET /api/servers/:server/backups/:id/download': ['backups.download', 'files.read'],
  'POST /api/servers/:server/backups/:id/download-link': ['backups.download', 'files.read'],
  'POST /api/servers/:server/backups/:id/restore': ['backups.restore', 'files.write'],
  'PUT /api/servers/:server/backups/:id/lock': 'backups.delete',
  'DELETE /api/servers/:server/backups/:id': 'backups.delete',
  'GET /api/servers/:server/backup-settings': 'backups.*',
  'PUT /api/servers/:server/backup-settings': 'backups.create',
  'PUT /api/servers/:server/backup-settings (retention)': ['backups.create', 'backups.delete'],
  'PUT /api/servers/:server/backup-settings (save commands)': ['backups.create', 'console.write'],
  'PUT /api/servers/:server/backup-settings (limits)': 'admin',
  'GET /api/servers/:server/files': 'files.read',
  'POST /api/servers/:server/files/create': 'files.write',
  'POST /api/servers/:server/files/upload': 'files.write',
  'GET /api/servers/:server/files/download': 'files.read',
  'POST /api/servers/:server/files/download-link': 'files.read',
  'GET /api/servers/:server/files/content': 'files.read',
  'PUT /api/servers/:server/files/content': 'files.write',
  'PUT /api/servers/:server/files/rename': 'files.write',
  'POST /api/servers/:server/files/move': 'files.write',
  'DELETE /api/servers/:server/files': 'files.write',
  'POST /api/servers/:server/files/delete': 'files.write',
  'POST /api/servers/:server/files/move-many': 'files.write',
  'POST /api/servers/:server/files/compress': 'files.write',
  'POST /api/servers/:server/files/decompress': 'files.write',
  'GET /api/servers/:server/audit': 'settings',
};

/** The pairs of permissions held together by callers of their own: what the lists of NEEDS ask. */
const PAIRS: readonly (readonly ServerPermission[])[] = [
  ['schedules', 'console.write'],
  ['backups.download', 'files.read'],
  ['backups.restore', 'files.write'],
  ['backups.create', 'backups.delete'],
  ['backups.create', 'console.write'],
  ['files.write', 'power'],
];

const BACKUP_PERMISSIONS: readonly ServerPermission[] = [
  'backups.create',
  'backups.download',
  'backups.restore',
  'backups.delete',
];

/** Whether one holding `holds` meets `need` (beside seeing the server). */
function meets(need: Exclude<Need, 'view' | 'admin'>, holds: readonly ServerPermission[]): boolean {
  if (need === 'backups.*') return BACKUP_PERMISSIONS.some((p) => holds.includes(p));
  if (typeof need === 'string') return holds.includes(need);
  return need.every((p) => holds.includes(p));
}

const isServerRoute = (route: Row): boolean => /^\/(api|ws)\/servers\/:server/.test(route.url);

/**
 * The routes allowed to answer without a token (`METHOD url`, exactly as registered; an entry
 * ending in ` …` matches every route whose key starts with what precedes it). A HEAD route counts
 * as its GET route.
 */
const PUBLIC_ROUTES: readonly string[] = [
  'GET /api/health',
  'GET /api/auth/registration',
  'POST /api/auth/register',
  'POST /api/auth/login',
  'POST /api/auth/login/2fa', // the challenge of a right password is its credential (test/two-factor.test.ts)
  'POST /api/auth/set-password/check', // a set-password link is its own credential (test/accounts-admin.test.ts)
  'POST /api/auth/set-password',
  'GET /api/auth/oidc/providers',
  'GET /api/auth/oidc/:provider/login',
  'GET /api/auth/oidc/:provider/callback',
  'GET /api/openapi.json',
  'GET /api/downloads/:id', // a single-use download link is its own credential (test/files-download-link.test.ts)
  'GET /metrics', // no user's token: METRICS_TOKEN, checked by the route itself (test/metrics.test.ts)
  'GET /api/docs …', // the interactive docs page and its assets (swagger-ui's own routes)
  'GET /*', // the web UI: its files and index page; never an /api or /ws path (test/http.test.ts)
];

const keyOf = (route: { method: string; url: string }): string => `${route.method} ${route.url}`;
const titleOf = (route: Row): string =>
  route.variant === undefined ? keyOf(route) : `${keyOf(route)} (${route.variant})`;
const matches = (entry: string, key: string): boolean =>
  entry.endsWith(' …') ? key.startsWith(entry.slice(0, -2)) : key === entry;
const isPublic = (key: string): boolean => PUBLIC_ROUTES.some((entry) => matches(entry, key));

/** The shared state every cell works on, and the admin's helpers for setting it up. */
class World {
  ticket = 0;
  base = '';
  readonly callers: Caller[] = [];
  #count = 0;

  constructor(readonly panel: TestPanel) {}

  unique(prefix: string): string {
    this.#count += 1;
    return `${prefix}-${this.#count}`;
  }

  /** The admin's current session (a password change in the matrix gives it a new token). */
  adminSession() {
    const admin = this.callers.find((caller) => caller.name === 'admin');
    assert.ok(admin?.token !== undefined);
    return {
      username: admin.username,
      token: admin.token,
      role: 'admin',
      headers: bearer(admin.token),
    };
  }

  /** A request as admin that must succeed; answers the `data` of the body. */
  async asAdmin(method: Method, url: string, payload?: object): Promise<unknown> {
    const response = await this.panel.app.inject({
      method,
      url,
      headers: this.adminSession().headers,
      ...(payload === undefined ? {} : { payload }),
    });
    assert.equal(response.statusCode, 200, `setup ${method} ${url}: ${response.body}`);
    return json<{ data?: unknown }>(response).data;
  }

  /** Sets the server lists of everyone who has access to SERVER (banned user included). */
  async grant(servers: readonly string[]): Promise<void> {
    for (const username of ['banned-user', 'member', 'helper']) {
      await this.asAdmin('PUT', `/api/users/${username}/servers`, { servers });
    }
  }

  async writeFile(name: string): Promise<void> {
    await this.asAdmin(
      'PUT',
      `/api/servers/${SERVER}/files/content?path=${encodeURIComponent(name)}`,
      { content: 'access matrix\n' },
    );
  }

  async #status(): Promise<string> {
    const data = (await this.asAdmin('GET', `/api/servers/${SERVER}/stats`)) as { status: string };
    return data.status;
  }

  async ensureRunning(): Promise<void> {
    if ((await this.#status()) === 'running') return;
    const data = (await this.asAdmin('POST', `/api/servers/${SERVER}/start`)) as { status: string };
    assert.equal(data.status, 'running', 'setup: the server did not start');
  }

  async ensureStopped(): Promise<void> {
    if (['running', 'starting'].includes(await this.#status())) {
      await this.asAdmin('POST', `/api/servers/${SERVER}/stop`);
    }
  }
}

interface Answer {
  readonly status: number;
  readonly body: string;
}

function pathOf(route: Row, world: World, request: Req): string {
  const defaults: Record<string, string> = {
    server: SERVER,
    id: String(world.ticket),
    username: TARGET_USER,
  };
  const path = route.url.replace(/:(\w+)/g, (_, name: string) => {
    const value = request.params?.[name] ?? defaults[name];
    assert.ok(value !== undefined, `no value for :${name} in ${route.url}`);
    return encodeURIComponent(value);
  });
  return request.query === undefined ? path : `${path}?${request.query}`;
}

/** Opens the console socket; 101 when it opened (it is closed at once), else the refusal. */
function openSocket(
  base: string,
  path: string,
  token: string | undefined,
  place: 'header' | 'query',
): Promise<Answer> {
  const url = new URL(path, base);
  url.protocol = 'ws:';
  if (token !== undefined && place === 'query') url.searchParams.set('token', token);
  const headers = token !== undefined && place === 'header' ? bearer(token) : {};
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      ws.terminate();
      resolve({ status: 0, body: 'no answer to the handshake within 10 s' });
    }, 10_000);
    const done = (answer: Answer) => {
      clearTimeout(timer);
      resolve(answer);
    };
    ws.on('error', (error) => {
      done({ status: 0, body: error.message });
    });
    ws.once('open', () => {
      ws.close();
      done({ status: 101, body: '' });
    });
    ws.once('unexpected-response', (request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        done({ status: response.statusCode ?? 0, body });
      });
    });
  });
}

const clip = (text: string): string => (text.length > 160 ? `${text.slice(0, 160)}…` : text);

/** The code a refusal must carry; `undefined` for the others (only the shape is checked). */
function expectedCode(caller: Caller, status: number, sessionOnly: boolean): string | undefined {
  if (status === 403 && caller.key !== undefined && sessionOnly) return 'SESSION_REQUIRED';
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return caller.name === 'banned' ? 'BANNED' : 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 426) return 'UPGRADE_REQUIRED';
  return undefined;
}

/**
 * The status a caller must get: its column's, or for a permission caller, its role's full-access
 * column when it holds what a server route needs (403 when not), and its role's no-access column
 * on every other route.
 */
function expectedFor(route: Row, caller: Caller, path: string, sessionOnly: boolean): number {
  if (caller.key !== undefined) return expectedForKey(route, caller.key, path, sessionOnly);
  if (caller.holds === undefined) return route.expect[caller.column]!;
  const support = caller.column === 6;
  if (!isServerRoute(route)) return route.expect[caller.column]!;
  const need = NEEDS[titleOf(route)];
  assert.ok(need !== undefined, `${titleOf(route)}: not in NEEDS`);
  const full = route.expect[support ? 5 : 4];
  if (need === 'view' || need === 'admin') return full;
  return meets(need, caller.holds) ? full : 403;
}

/**
 * The status an admin's key narrowed to servers must get: on the routes of its own server (SERVER
 * for the narrowed key, none for the empty list), what the admin gets; on every other server
 * route 403; outside servers, what a user without access gets (its owner's own account and
 * tickets, nothing of an admin or staff member); never a route that refuses keys (403).
 */
function expectedForKey(
  route: Row,
  key: 'narrowed' | 'empty',
  path: string,
  sessionOnly: boolean,
): number {
  if (sessionOnly) return 403;
  if (!isServerRoute(route)) return route.expect[3];
  const server = /^\/(?:api|ws)\/servers\/([^/?]+)/.exec(path)?.[1];
  return key === 'narrowed' && server === SERVER ? route.expect[7] : 403;
}

/** What is wrong with one cell's answer, or `undefined`. */
function judge(
  caller: Caller,
  want: number,
  got: Answer,
  hasBody: boolean,
  sessionOnly: boolean,
): string | undefined {
  if (got.status !== want) {
    return `${caller.name}: expected ${want}, got ${got.status} ${clip(got.body)}`;
  }
  if (!hasBody || want < 400) return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(got.body) as Record<string, unknown>;
  } catch {
    return `${caller.name}: ${want} as expected, but the body is not JSON: ${clip(got.body)}`;
  }
  if (typeof body.message !== 'string' || body.statusCode !== want) {
    return `${caller.name}: ${want} as expected, but the error body is malformed: ${clip(got.body)}`;
  }
  const code = expectedCode(caller, want, sessionOnly);
  if (code !== undefined && body.code !== code) {
    return `${caller.name}: ${want} as expected, but code ${String(body.code)} instead of ${code}`;
  }
  return undefined;
}

describe('access matrix', () => {
  let panel: TestPanel;
  let world: World;

  const suite = suiteScope();
  before(async () => {
    // With METRICS_TOKEN, so that /metrics is registered on this port too; the webhooks' URL
    // allowed although it is loopback.
    panel = await startPanel(suite, {
      METRICS_TOKEN: 'access-matrix-metrics-token',
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1:9',
    });
    world = new World(panel);
    world.base = await panel.listen();

    const admin = await register(panel, 'matrix-admin');
    await createServer(panel, admin, SERVER);
    // Every backup row makes backups of the one server: more than the default count of 10.
    const unlimited = await panel.app.inject({
      method: 'PUT',
      url: `/api/servers/${SERVER}/backup-settings`,
      headers: admin.headers,
      payload: { maxCount: 1000 },
    });
    assert.equal(unlimited.statusCode, 200, unlimited.body);
    const roles: Record<string, string> = {
      'banned-user': 'banned',
      outsider: 'user',
      member: 'user',
      helper: 'support',
      'helper-out': 'support',
      [TARGET_USER]: 'user',
    };
    const tokens: Record<string, string> = {};
    for (const username of Object.keys(roles)) {
      tokens[username] = (await register(panel, username)).token;
    }

    // A token exactly like the member's, signed with another secret; the same claims signed
    // with the panel's secret are accepted, so only the signature is wrong.
    const member = tokens.member!;
    const claims = JSON.parse(
      new TextDecoder().decode(base64url.decode(member.split('.')[1]!)),
    ) as JWTPayload;
    const sign = (secret: string) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .sign(new TextEncoder().encode(secret));
    const control = await panel.app.inject({
      url: '/api/auth/me',
      headers: bearer(await sign(TEST_JWT_SECRET)),
    });
    assert.equal(control.statusCode, 200, control.body);
    const wrongSecret = await sign('another-secret-that-is-long-enough-for-hs256!');

    const callers: [string, number, string, string | undefined][] = [
      ['anonymous', 0, 'nobody', undefined],
      ['bad token (garbage)', 1, 'nobody', 'not-a-token'],
      ['bad token (wrong secret)', 1, 'nobody', wrongSecret],
      ['banned', 2, 'banned-user', tokens['banned-user']],
      ['user without access', 3, 'outsider', tokens.outsider],
      ['user with access', 4, 'member', tokens.member],
      ['support with access', 5, 'helper', tokens.helper],
      ['support without access', 6, 'helper-out', tokens['helper-out']],
      ['admin', 7, admin.username, admin.token],
    ];
    for (const [name, column, username, token] of callers) {
      world.callers.push({ name, column, username, token });
    }
    // A user and a support member for each permission alone, and one each with none: the server
    // in their list through the per-server endpoint. Judged by NEEDS (see expectedFor); column:
    // the no-access column of their role, for every route that is not about one server.
    for (const role of ['user', 'support'] as const) {
      const sets = [[], ...SERVER_PERMISSIONS.map((p) => [p]), ...PAIRS];
      for (const [index, holds] of sets.entries()) {
        const username = `p-${role}-${index}`;
        const { token } = await register(panel, username);
        const granted = await panel.app.inject({
          method: 'PUT',
          url: `/api/servers/${SERVER}/users/${username}`,
          headers: admin.headers,
          payload: { permissions: holds },
        });
        assert.equal(granted.statusCode, 200, granted.body);
        if (role === 'support') await setRole(panel, admin, username, 'support');
        world.callers.push({
          name: `${role} holding ${holds.length === 0 ? 'no permission' : holds.join(' and ')}`,
          column: role === 'user' ? 3 : 6,
          username,
          token,
          holds,
        });
      }
    }
    // The admin's API keys narrowed to servers: to SERVER alone, and to an empty list. Judged by
    // expectedForKey: a narrowed key reaches only its server's routes, never an admin route.
    for (const [name, key, servers] of [
      ['admin with a key narrowed to one server', 'narrowed', [SERVER]],
      ['admin with a key with an empty server list', 'empty', []],
    ] as const) {
      const made = await panel.app.inject({
        method: 'POST',
        url: '/api/profile/api-keys',
        headers: admin.headers,
        payload: { name, servers, password: PASSWORD },
      });
      assert.equal(made.statusCode, 200, made.body);
      const { token } = json<{ data: { token: string } }>(made).data;
      rememberSecret(token);
      world.callers.push({ name, column: 7, username: admin.username, token, key });
    }
    // The server is assigned before the ban, so the banned user has it in their list.
    await world.grant([SERVER]);
    for (const [username, role] of Object.entries(roles)) {
      if (role !== 'user') await setRole(panel, admin, username, role);
    }

    // The ticket of the user with access, and a file in the server's directory.
    const ticket = await panel.app.inject({
      method: 'POST',
      url: '/api/tickets/create',
      headers: bearer(member),
      payload: { title: 'The member’s ticket', description: 'Seen by its owner and the staff' },
    });
    assert.equal(ticket.statusCode, 200, ticket.body);
    world.ticket = json<{ data: { id: number } }>(ticket).data.id;
    await world.writeFile(FILE);
  });

  /** Every caller, one fresh request each; fails once, listing every cell that differs. */
  async function check(route: Row, method: Method | 'HEAD', title: string): Promise<void> {
    const mismatches: string[] = [];
    for (const caller of world.callers) {
      const made = route.setup ? await route.setup(world) : '';
      const request = route.request({ world, caller, made });
      const path = pathOf(route, world, request);
      let answer: Answer;
      if (route.socket !== undefined && method === 'GET') {
        answer = await openSocket(world.base, path, caller.token, route.socket);
      } else {
        const response = await panel.app.inject({
          method,
          url: path,
          headers: {
            ...request.headers,
            ...(caller.token === undefined ? {} : bearer(caller.token)),
          },
          ...(request.payload === undefined ? {} : { payload: request.payload }),
        });
        answer = { status: response.statusCode, body: response.body };
      }
      // A plain HTTP request on the socket route passes the same checks, then is told to upgrade.
      const sessionOnly = panel.app.registeredRoutes.some(
        (r) => r.method === route.method && r.url === route.url && r.sessionOnly,
      );
      const expected = expectedFor(route, caller, path, sessionOnly);
      const want =
        route.socket !== undefined && method === 'HEAD' && expected === 101 ? 426 : expected;
      const problem = judge(caller, want, answer, method !== 'HEAD', sessionOnly);
      if (problem !== undefined) mismatches.push(problem);
      if (route.renewsToken && answer.status === 200) {
        caller.token = (
          JSON.parse(answer.body) as { data: { access_token: string } }
        ).data.access_token;
      }
    }
    if (mismatches.length > 0) {
      assert.fail(
        `${title}: ${mismatches.length} of ${world.callers.length} cells differ from the table:\n  ${mismatches.join('\n  ')}`,
      );
    }
  }

  it('has a row for every protected route and lists every public one, nothing stale', () => {
    const registered = panel.app.registeredRoutes;
    const rows = new Set(MATRIX.map(keyOf));
    const problems: string[] = [];
    for (const route of registered) {
      const key = keyOf(route);
      // Fastify adds a HEAD route for each GET route: it is covered by its GET route.
      const covering = route.method === 'HEAD' ? `GET ${route.url}` : key;
      const inMatrix = rows.has(covering);
      const listedPublic = isPublic(covering);
      if (inMatrix && listedPublic) {
        problems.push(`${key}: both in the matrix and in the public list`);
      }
      if (!inMatrix && !listedPublic) {
        problems.push(`${key}: neither in the matrix nor in the public list`);
      }
      if (listedPublic && route.access !== 'public') {
        problems.push(
          `${key}: in the public list, but its access is ${JSON.stringify(route.access)}`,
        );
      }
      if (inMatrix && route.access === 'public') problems.push(`${key}: in the matrix, but public`);
      const get = registered.find((other) => other.method === 'GET' && other.url === route.url);
      if (route.method === 'HEAD' && get && !isDeepStrictEqual(get.access, route.access)) {
        problems.push(
          `${key}: access ${JSON.stringify(route.access)}, its GET ${JSON.stringify(get.access)}`,
        );
      }
    }
    const registeredKeys = new Set(registered.map(keyOf));
    for (const key of rows) {
      if (!registeredKeys.has(key)) {
        problems.push(`${key}: in the matrix, but not a registered route`);
      }
    }
    for (const entry of PUBLIC_ROUTES) {
      if (![...registeredKeys].some((key) => matches(entry, key))) {
        problems.push(`${entry}: in the public list, but not a registered route`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('knows what every route of a server needs, nothing stale', () => {
    const titles = new Set(MATRIX.filter(isServerRoute).map(titleOf));
    assert.deepEqual(
      [...titles].filter((title) => NEEDS[title] === undefined),
      [],
      'server routes without an entry in NEEDS',
    );
    assert.deepEqual(
      Object.keys(NEEDS).filter((title) => !titles.has(title)),
      [],
      'entries of NEEDS that are no route',
    );
  });

  for (const route of MATRIX) {
    it(titleOf(route), () => check(route, route.method, titleOf(route)));
    if (route.method === 'GET' && route.variant === undefined) {
      it(`HEAD ${route.url}`, (t) => {
        if (!panel.app.registeredRoutes.some((r) => r.method === 'HEAD' && r.url === route.url)) {
          t.skip('no HEAD route registered');
          return;
        }
        return check(route, 'HEAD', `HEAD ${route.url}`);
      });
    }
  }
});
