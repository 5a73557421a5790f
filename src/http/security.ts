/**
 * Headers on every response. The API only ever answers JSON or file bytes, so the browser is told
 * not to sniff, frame, cache or run anything; the docs page and the web UI (`web.ts`) loosen the
 * policy for themselves and set their own caching.
 */
import type { FastifyInstance } from 'fastify';

const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function registerSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('X-Frame-Options', 'DENY');
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cross-Origin-Resource-Policy', 'same-origin');
    if (!reply.hasHeader('Content-Security-Policy')) {
      reply.header('Content-Security-Policy', API_CSP);
    }
    if (!request.url.startsWith('/api/docs') && !reply.hasHeader('Cache-Control')) {
      reply.header('Cache-Control', 'no-store');
    }
  });
}
