/**
 * Records every change made through the API: each request to a route of `AUDITED_ROUTES` that
 * succeeded, and each that was refused for lack of rights (403) or failed inside (5xx); sign-in
 * routes record their refusals too. The entry is written before the answer is sent, so a client
 * that got its answer finds the entry.
 *
 * What is recorded of the request: the route's action, its server and target (path parameters,
 * the `path` query), and the `SAFE_FIELDS` of the body and query, shortened. Never a password,
 * token, code, console input or file content: those fields are not in the list (a schedule's
 * tasks and backup save commands are configuration, and are recorded).
 *
 * Who a sign-in names (docs/security.md, "The audit log"): the account, when the name tried is an
 * existing account's, right or wrong; otherwise nobody, with `unknownAccount: true` and the
 * address. The name typed is never kept for itself: it may be a password typed in the wrong field.
 */
import type { FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import type { User } from '../../domain/user.js';
import type { App } from '../../http/types.js';
import { AUDITED_ROUTES, SAFE_FIELDS, SIGN_IN_ROUTES } from './audit-actions.js';
import type { AuditService } from './audit.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who acted, when the route knows better than the token (a sign-in names its user). */
    auditActor: { id: number | null; name: string } | null;
    /** The route answered a success status for what failed (a sign-in redirected with an error). */
    auditFailed: boolean;
  }
}

const MAX_TEXT = 200;
const MAX_ITEMS = 50;
const MAX_JSON = 1000;

/** Where the hook finds the account a sign-in named (the users domain keeps them). */
export interface AuditAccounts {
  findByUsername(username: string): Promise<User | undefined>;
}

export function registerAuditHook(app: App, audit: AuditService, accounts: AuditAccounts): void {
  app.decorateRequest('auditActor', null);
  app.decorateRequest('auditFailed', false);
  // Each audited route gets the hook as it is registered, its action resolved once: the other
  // routes (every read) never run it.
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url}`;
      const action = AUDITED_ROUTES[key];
      if (action === undefined) continue;
      const record = recorder(audit, accounts, key, action);
      route.onSend = [...[route.onSend ?? []].flat(), record];
    }
  });
}

/** The onSend hook of one audited route. */
function recorder(
  audit: AuditService,
  accounts: AuditAccounts,
  key: string,
  action: string,
): onSendAsyncHookHandler {
  const signIn = SIGN_IN_ROUTES.has(key);
  const creation = action.endsWith('.create');
  const serverInBody = key === 'POST /api/servers/create';
  // An account being made is named by the body.
  const userInBody = key === 'POST /api/users';
  return async (request, reply, payload) => {
    const status = reply.statusCode;
    const ok = status < 400 && !request.auditFailed;
    if (!ok && status !== 403 && status < 500 && !signIn && !request.auditFailed) return payload;
    const about = what(request, serverInBody, userInBody);
    const actor = await who(request, signIn, accounts);
    if (signIn) {
      // The account is the actor; the name as typed is not kept (see above).
      delete about.details.username;
      if (actor.unknownAccount) about.details.unknownAccount = true;
    }
    await audit.record({
      ...actor.entry,
      action,
      ...about,
      // What a creation made is named by its answer.
      target: about.target ?? (ok && creation ? createdId(payload) : null),
      outcome: ok ? 'ok' : 'failed',
      status,
    });
    return payload;
  };
}

async function who(request: FastifyRequest, signIn: boolean, accounts: AuditAccounts) {
  const user = request.user;
  let actor = request.auditActor ?? (user ? { id: user.id, name: user.username } : null);
  let unknownAccount = false;
  // A sign-in names the account it tried, right or wrong, when there is one.
  const tried = isObject(request.body) ? request.body.username : undefined;
  if (actor === null && signIn && typeof tried === 'string') {
    // No account's name holds a NUL, which PostgreSQL refuses in any text: not looked up.
    const lookup = tried.length <= MAX_TEXT && !tried.includes('\u0000');
    const account = lookup ? await accounts.findByUsername(tried) : undefined;
    if (account) actor = { id: account.id, name: account.username };
    else unknownAccount = true;
  }
  return {
    unknownAccount,
    entry: {
      actorId: actor?.id ?? null,
      actor: actor?.name ?? null,
      via: user?.key === undefined ? ('session' as const) : ('api-key' as const),
      viaName: user?.key?.name ?? null,
      address: request.ip,
    },
  };
}

function what(request: FastifyRequest, serverInBody: boolean, userInBody: boolean) {
  const params = (request.params ?? {}) as Record<string, unknown>;
  const query = (request.query ?? {}) as Record<string, unknown>;
  const body = isObject(request.body) ? request.body : {};
  const details: Record<string, unknown> = {};
  for (const source of [query, body]) {
    for (const field of SAFE_FIELDS) {
      if (field in source) details[field] = shortened(source[field]);
    }
  }
  const text = (value: unknown): string | null =>
    typeof value === 'string' || typeof value === 'number'
      ? String(value).slice(0, MAX_TEXT)
      : null;
  const server = text(params.server);
  const target =
    text(params.username) ??
    (userInBody ? text(body.username) : null) ??
    text(params.id) ??
    text(params.provider) ??
    text(params.host) ??
    text(body.host) ??
    // A node.
    text(params.name) ??
    text(query.path) ??
    (server === null ? text(body.name) : null);
  return {
    // A server being made is named by the body.
    server: server ?? (serverInBody ? text(body.name) : null),
    target,
    details,
  };
}

/** The id a creation answered (`data.id`, or the `id` of the one object in `data`), if any. */
function createdId(payload: unknown): string | null {
  if (typeof payload !== 'string' || payload.length > 65_536) return null;
  let body: unknown;
  try {
    body = JSON.parse(payload);
  } catch {
    return null;
  }
  const data = isObject(body) ? body.data : undefined;
  if (!isObject(data)) return null;
  const made = [data, ...Object.values(data).filter(isObject)].find(
    (candidate) => typeof candidate.id === 'number' || typeof candidate.id === 'string',
  );
  return made === undefined ? null : String(made.id).slice(0, MAX_TEXT);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function shortened(value: unknown): unknown {
  if (typeof value === 'string')
    return value.length > MAX_TEXT ? `${value.slice(0, MAX_TEXT)}…` : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return value;
  if (Array.isArray(value)) {
    const items = value.slice(0, MAX_ITEMS).map(shortened);
    return value.length > MAX_ITEMS ? [...items, `… ${value.length - MAX_ITEMS} more`] : items;
  }
  const json = JSON.stringify(value);
  return json.length > MAX_JSON ? `${json.slice(0, MAX_JSON)}…` : value;
}
