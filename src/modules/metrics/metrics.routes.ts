/**
 * Counting every request the panel answers, and `GET /metrics` on the panel's own port when
 * METRICS_TOKEN is set: the route is public to the access control (no user's JWT) and checks
 * the metrics token itself.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { bearerToken } from '../../http/access.js';
import type { App } from '../../http/types.js';
import { AppError } from '../../errors.js';
import { UNMATCHED_ROUTE, type PanelMetrics } from './metrics.service.js';

export const METRICS_PATH = '/metrics';

export function metricsRoutes(
  app: App,
  metrics: PanelMetrics,
  options: { readonly token: string | null },
): void {
  app.addHook('onResponse', async (request, reply) => {
    // The pattern (`/api/servers/:server/files`), never the URL: a URL may carry a download
    // link's id, and would make a series per server, file and typo.
    const route = request.is404 ? undefined : request.routeOptions.url;
    metrics.observeRequest(
      request.method,
      route ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
  });

  const { token } = options;
  if (token === null) return;
  // Digests of equal length, compared in constant time: neither the token nor its length leaks.
  const expected = digest(token);
  app.get(
    METRICS_PATH,
    {
      config: { access: 'public' },
      // Not part of the JSON API (and only there when configured): left out of the OpenAPI document.
      schema: { hide: true },
    },
    async (request, reply) => {
      const given = bearerToken(request.headers.authorization);
      if (given === undefined || !timingSafeEqual(digest(given), expected)) {
        throw new AppError('UNAUTHORIZED', 'Missing or wrong metrics token');
      }
      const text = await metrics.render();
      return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
    },
  );
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
