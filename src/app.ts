/**
 * Builds the panel: Fastify with its cross-cutting plugins, then every module wired explicitly
 * from its dependencies. Nothing here listens; `server.ts` does.
 */
import { readFileSync } from 'node:fs';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv, type Options as AjvOptions } from 'ajv';
import addFormats from 'ajv-formats';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { Config } from './config.js';
import { openDatabase, type Db } from './db/database.js';
import { registerAccessControl } from './http/access.js';
import { registerDocs } from './http/docs.js';
import { registerErrorHandling, sendError } from './http/errors.js';
import { ErrorBody } from './http/schemas.js';
import { registerSecurityHeaders } from './http/security.js';
import { createAuthService } from './modules/auth/auth.service.js';
import { authRoutes } from './modules/auth/auth.routes.js';
import { LoginThrottle } from './modules/auth/login-throttle.js';
import { createPasswordHasher } from './modules/auth/passwords.js';
import { createTokenService } from './modules/auth/tokens.js';
import { healthRoutes } from './modules/health/health.routes.js';
import { profileRoutes } from './modules/profile/profile.routes.js';
import { createProfileService } from './modules/profile/profile.service.js';
import { ServersRepository } from './modules/servers/servers.repository.js';
import { TicketsRepository } from './modules/tickets/tickets.repository.js';
import { usersRoutes } from './modules/users/users.routes.js';
import { UsersRepository } from './modules/users/users.repository.js';
import { createUsersService } from './modules/users/users.service.js';

export interface AppOverrides {
  /** An already open database (tests keep a handle to insert rows directly). */
  readonly db?: Db;
  readonly now?: () => Date;
  /** Replaces the logger settings, e.g. to capture the log in a test. */
  readonly logger?: FastifyServerOptions['logger'];
}

export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

export async function buildApp(config: Config, overrides: AppOverrides = {}) {
  const db = overrides.db ?? (await openDatabase(config.database));
  const now = overrides.now ?? (() => new Date());

  const app = Fastify({
    logger: overrides.logger ?? loggerOptions(config),
    bodyLimit: config.maxBodyBytes,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply, error);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  setValidators(app);
  // Every body this API takes is JSON (uploads arrive with the file manager); text is refused (415).
  app.removeContentTypeParser('text/plain');
  app.addHook('onClose', () => db.close());
  app.addSchema(ErrorBody);
  registerErrorHandling(app);
  registerSecurityHeaders(app);
  await registerDocs(app, VERSION);

  const users = new UsersRepository(db.kysely, db.dialect);
  const servers = new ServersRepository(db.kysely);
  const tickets = new TicketsRepository(db.kysely);
  const hasher = createPasswordHasher();
  const tokens = createTokenService(config.jwtSecret, now);
  const throttle = new LoginThrottle({ ...config.loginThrottle, now });
  const auth = createAuthService({
    users,
    servers,
    hasher,
    tokens,
    throttle,
    registration: config.registration,
    now,
  });

  registerAccessControl(app, auth);
  healthRoutes(app, VERSION);
  authRoutes(app, auth);
  usersRoutes(app, createUsersService({ users, servers, now }));
  profileRoutes(app, createProfileService({ users, tickets, auth, hasher }));

  return app;
}

/**
 * Bodies are validated strictly (no type coercion, unknown fields refused, no defaults filled in
 * silently); query strings and path parameters are text on the wire, so they may be coerced.
 */
function setValidators(app: FastifyInstance): void {
  const common: AjvOptions = { allErrors: false, strict: false, removeAdditional: false };
  const body = addFormats.default(new Ajv({ ...common, coerceTypes: false, useDefaults: false }));
  const other = addFormats.default(new Ajv({ ...common, coerceTypes: 'array', useDefaults: true }));
  for (const ajv of [body, other]) ajv.addSchema(ErrorBody);
  app.setValidatorCompiler(({ schema, httpPart }) =>
    (httpPart === 'body' ? body : other).compile(schema),
  );
}

/** Tokens ride in the Authorization header or, for the console socket, the `token` query. */
const redactUrl = (url: string): string => url.replace(/([?&]token=)[^&]*/gi, '$1[redacted]');

function loggerOptions(config: Config): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    redact: {
      paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'],
      censor: '[redacted]',
    },
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
  };
}
