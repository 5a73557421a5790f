/**
 * The Fastify instance the panel is built on, and the limits of its HTTP server: bodies up to
 * MAX_BODY_BYTES, the proxies TRUST_PROXY names, TLS when the panel serves it itself, the log
 * (./logging.ts), serializers compiled on first use (./lazy-schemas.ts), and Fastify's own
 * errors (a body that is not JSON) answered as every other (./errors.ts).
 *
 * Slow clients cannot hold the panel: a connection idle for a minute is closed, headers must
 * arrive within 10 s, an idle keep-alive connection lasts 10 s, and a whole request (an upload
 * included) has an hour. Console sockets leave these timeouts once upgraded.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import type { Config } from '../config.js';
import { sendError } from './errors.js';
import type { LazySchemas } from './lazy-schemas.js';
import { loggerOptions, RequestLog, type LogStream } from './logging.js';
import type { TlsPair } from './tls.js';

export function createFastify(
  config: Config,
  options: {
    readonly schemas: LazySchemas;
    readonly tls: TlsPair | null;
    /** Where the log goes instead of standard output. */
    readonly logStream?: LogStream | undefined;
  },
) {
  const { schemas, tls } = options;
  const app = Fastify({
    schemaController: { compilersFactory: { buildSerializer: schemas.serializerFactory() } },
    logger: loggerOptions(config, options.logStream),
    logController: new RequestLog(),
    // TLS served by the panel itself; src/server.ts reloads the pair on SIGHUP.
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
    bodyLimit: config.maxBodyBytes,
    connectionTimeout: 60_000,
    keepAliveTimeout: 10_000,
    requestTimeout: 3_600_000,
    trustProxy: config.trustProxy.length > 0 ? [...config.trustProxy] : false,
    frameworkErrors: (error, _request, reply) => {
      void sendError(reply, error);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.headersTimeout = 10_000;
  return app;
}
