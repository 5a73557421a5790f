/**
 * The panel's log: its options (level, serializers, where lines go and in which format) and one
 * line per request.
 *
 * Format (`LOG_FORMAT`): `pretty` writes lines for people (pino-pretty), `json` one JSON object a
 * line, `auto` pretty when standard output is a terminal and JSON otherwise (a service's journal,
 * a pipe, the tests' log scanner). pino-pretty runs in this thread as a plain stream: pino's
 * worker-thread transports resolve modules by name at run time, which the one-file bundle
 * (dist/panel.mjs) cannot offer.
 *
 * Requests: one line each, once answered (method, URL with its credentials hidden, status, time),
 * at `info`; routes marked `polled` (what the web UI asks every few seconds, and health checks)
 * at `debug`, so that an open tab does not fill the log. A console socket gets its line when it
 * opens (status 101).
 */
import pinoPretty from 'pino-pretty';
import {
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import type { Config } from '../config.js';
import { DOWNLOADS } from '../modules/files/files.routes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Asked again and again by the web UI (its polled queries) or by health checks: the request
     * line is logged at `debug`, not `info`.
     */
    polled?: boolean;
  }
}

/** Where a log line goes: a stream that takes one line (JSON or pretty text) at a time. */
export interface LogStream {
  write(line: string): void;
}

/** The format `LOG_FORMAT` asks for, with `auto` decided by whether `output` is a terminal. */
export function logFormatOf(
  format: Config['logFormat'],
  output: { isTTY?: boolean } = process.stdout,
): 'pretty' | 'json' {
  if (format === 'auto') return output.isTTY === true ? 'pretty' : 'json';
  return format;
}

/**
 * Fastify's `logger` options. `stream` replaces standard output (tests hand in theirs) and is
 * always written JSON, whatever LOG_FORMAT says: the test-suite reads it as such.
 *
 * A request is logged as its method, URL (credentials hidden) and address, and a response as its
 * status: no header ever reaches the log, so there is nothing for pino's path redaction to hide.
 */
export function loggerOptions(config: Config, stream?: LogStream) {
  const pretty = stream === undefined && logFormatOf(config.logFormat) === 'pretty';
  const destination =
    stream ??
    (pretty
      ? pinoPretty({
          sync: true,
          colorize: process.stdout.isTTY,
          translateTime: 'SYS:yyyy-mm-dd HH:MM:ss',
          // The request line's message already says all of these.
          ignore: 'pid,hostname,reqId,req,res,responseTime',
        })
      : undefined);
  return {
    level: config.logLevel,
    serializers: {
      req: (request: { method: string; url: string; ip?: string }) => ({
        method: request.method,
        url: redactUrl(request.url),
        remoteAddress: request.ip,
      }),
    },
    ...(destination === undefined ? {} : { stream: destination }),
  };
}

/**
 * Fastify's request log lines, replaced: nothing when a request comes in, one line once it is
 * answered. Fastify's other lines (a route not found, an error of its own handler) are kept.
 */
export class RequestLog extends LogController {
  override incomingRequest(): void {
    // Said once the request is answered, with its status and time.
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const ms = reply.elapsedTime;
    const line = `${request.method} ${redactUrl(request.url)} ${reply.statusCode} ${ms.toFixed(0)} ms`;
    const details = { req: request, res: reply, responseTime: ms };
    if (error) {
      reply.log.error({ ...details, err: error }, line);
      return;
    }
    const level = request.routeOptions.config.polled === true ? 'debug' : 'info';
    reply.log[level](details, line);
  }
}

/**
 * A WebSocket upgrade that reaches its handler is answered by the socket, not by a reply Fastify
 * sees finish: it gets its line here, once every check before the handler has let it through
 * (one refused before is answered, and logged, as any request).
 */
export function registerSocketLog(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    if (request.ws) {
      const level = request.routeOptions.config.polled === true ? 'debug' : 'info';
      request.log[level](
        { req: request, res: { statusCode: 101 } },
        `${request.method} ${redactUrl(request.url)} 101 socket opened`,
      );
    }
    done();
  });
}

/**
 * Tokens ride in the Authorization header or, for the console socket, the query string. A socket
 * URL's whole query is hidden (however its parameter names are spelled or encoded); elsewhere any
 * parameter named `token` is.
 */
export function redactUrl(url: string): string {
  // A download link's id is its credential, in the path itself.
  if (url.startsWith(`${DOWNLOADS}/`)) return `${DOWNLOADS}/[redacted]`;
  const mark = url.indexOf('?');
  if (mark < 0) return url;
  const path = url.slice(0, mark);
  if (path.startsWith('/ws/')) return `${path}?[redacted]`;
  const query = new URLSearchParams(url.slice(mark + 1));
  let hidden = false;
  for (const key of new Set(query.keys())) {
    if (key.toLowerCase() === 'token') {
      query.set(key, '[redacted]');
      hidden = true;
    }
  }
  return hidden ? `${path}?${query.toString()}` : url;
}
