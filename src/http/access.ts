/**
 * Who may call a route, declared on the route itself (`config.access`) and checked before the
 * body is even parsed. A route that declares nothing is open to signed-in, non-banned users only:
 * forgetting the declaration can never make a route public.
 *
 * The token (a session's JWT, or an API key) only says who the caller is; the user is loaded
 * from the database on every request, so roles, bans, deletions and password changes count at
 * once.
 */
import type { FastifyRequest } from 'fastify';
import { can, type Action } from '../domain/policy.js';
import { AppError } from '../errors.js';
import type { AuthService } from '../modules/auth/auth.service.js';
import type { User } from '../domain/user.js';
import type { App } from './types.js';

export type Access =
  /** Anyone, without a token. */
  | 'public'
  /** Any valid token, banned users included (only `GET /api/auth/me`). */
  | 'signed-in'
  /** Any valid token of a user who is not banned. The default. */
  | 'active'
  /** A user whom the policy allows this action (src/domain/policy.ts; never `banned`). */
  | { readonly action: Action };

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** Also take the token from the `token` query parameter (the console socket). */
    tokenInQuery?: boolean;
    /** Open to a user whose role requires a second factor they have not set up yet. */
    beforeSecondFactor?: boolean;
    /** Refused to a request made with an API key (key management, second factor, password). */
    sessionOnly?: boolean;
  }
  interface FastifyRequest {
    /** The caller, loaded for every route that is not public. */
    user: User | null;
  }
}

/** The token of an `Authorization: Bearer …` header, or `undefined`. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer[ \t]+([^\s]+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/**
 * Resolves a token to a user allowed by `access`, or throws the 401/403 to answer. Shared by
 * the HTTP routes and, later, the console socket's upgrade.
 */
export async function authorize(
  auth: AuthService,
  token: string | undefined,
  access: Exclude<Access, 'public'>,
  options: { beforeSecondFactor?: boolean; sessionOnly?: boolean; address?: string } = {},
): Promise<User> {
  if (token === undefined) throw new AppError('UNAUTHORIZED', 'Missing bearer token');
  const user = await auth.authenticate(token, options.address);
  if (!user) throw new AppError('UNAUTHORIZED', 'Invalid, expired or revoked token');
  if (options.sessionOnly === true && user.key !== undefined) {
    throw new AppError('SESSION_REQUIRED', 'API keys cannot do this: sign in instead');
  }
  if (access === 'signed-in') return user;
  if (user.role === 'banned') throw new AppError('BANNED', 'This account is banned');
  if (options.beforeSecondFactor !== true && auth.mustEnrolSecondFactor(user)) {
    throw new AppError(
      'TWO_FACTOR_REQUIRED',
      'Your role must sign in with a second factor: set it up on your profile first',
    );
  }
  if (access !== 'active' && !can(user, access.action)) {
    // The role allows it and the key does not: say which, so a script's author knows.
    const byKey = user.key !== undefined && can({ role: user.role }, access.action);
    throw new AppError(
      'FORBIDDEN',
      byKey ? 'This API key does not allow this' : 'Your role does not allow this',
    );
  }
  return user;
}

export function registerAccessControl(app: App, auth: AuthService): void {
  app.decorateRequest('user', null);
  app.addHook('onRequest', async (request) => {
    if (request.is404) return;
    // `routeOptions` builds a new object on every read: read once.
    const { config } = request.routeOptions;
    const access = config.access ?? 'active';
    if (access === 'public') return;
    const fromQuery = config.tokenInQuery
      ? (request.query as { token?: unknown }).token
      : undefined;
    const token =
      bearerToken(request.headers.authorization) ??
      (typeof fromQuery === 'string' && fromQuery !== '' ? fromQuery : undefined);
    request.user = await authorize(auth, token, access, {
      beforeSecondFactor: config.beforeSecondFactor === true,
      sessionOnly: config.sessionOnly === true,
      address: request.ip,
    });
  });
}

/** The caller of a protected route. */
export function currentUser(request: FastifyRequest): User {
  if (!request.user) throw new AppError('UNAUTHORIZED', 'Missing bearer token');
  return request.user;
}
