/**
 * The web UI: the single-page app built by Vite into `dist/web`, served by the panel itself.
 *
 * Contract of `GET /*` (and its HEAD), public:
 * - `/api`, `/api/…`, `/ws`, `/ws/…` and `/metrics` are never the UI: a path there that no API
 *   route took answers the API's own 404 error body (`/metrics` when metrics are not served here).
 * - A file of the build answers with its bytes. Hashed assets (`/assets/…`) are cached for a year
 *   as immutable; everything else, `index.html` above all, is revalidated on every use, so a new
 *   build is picked up at the next page load.
 * - Any other path answers the app's `index.html` when the client accepts HTML (a browser
 *   navigating to `/servers` or reloading it), so the client-side router shows the page. Clients
 *   that do not ask for HTML get the 404 error body, as on the API.
 *
 * Every UI response carries its own Content-Security-Policy: scripts, styles, images, fonts and
 * connections from the panel's own origin only (plus the console socket on the same host), no
 * inline script or `eval`, no framing.
 */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PANEL_ROOT } from '../paths.js';

/** Where `npm run build` puts the UI. */
export const DEFAULT_WEB_ROOT = path.join(PANEL_ROOT, 'dist', 'web');

const IMMUTABLE = { cacheControl: true, maxAge: '365d', immutable: true } as const;
const REVALIDATE = { cacheControl: false } as const;

/** A Host header that can only be a host name or address with an optional port. */
const SAFE_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * The UI's policy. `connect-src 'self'` covers ws:/wss: of the same origin in CSP 3, but not in
 * every browser still in use, so the socket origins of the host the page was loaded from are
 * named too (only when the Host header is a plain host, so it cannot add directives).
 */
export function uiContentSecurityPolicy(host: string | undefined): string {
  const sockets = host !== undefined && SAFE_HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self'${sockets}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** True when the Accept header names `text/html` with a non-zero quality. */
export function acceptsHtml(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  return accept.split(',').some((entry) => {
    const [type = '', ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (type !== 'text/html') return false;
    const quality = params.find((param) => param.startsWith('q='));
    return quality === undefined || Number(quality.slice(2)) > 0;
  });
}

function isApiPath(pathname: string): boolean {
  return /^\/(?:api|ws)(?:\/|$)/.test(pathname) || pathname === '/metrics';
}

/** The build file a decoded URL path names, relative to the root, or `null` when it names none. */
async function buildFile(root: string, wanted: string): Promise<string | null> {
  if (wanted === '' || wanted.endsWith('/') || wanted.includes('\0')) return null;
  const segments = wanted.split('/');
  if (segments.some((segment) => segment === '..' || segment.startsWith('.'))) return null;
  const file = path.join(root, ...segments);
  if (!file.startsWith(root + path.sep)) return null;
  try {
    return (await stat(file)).isFile() ? segments.join('/') : null;
  } catch {
    return null;
  }
}

export async function registerWebUi(app: FastifyInstance, root: string): Promise<void> {
  const webRoot = path.resolve(root);
  try {
    await stat(path.join(webRoot, 'index.html'));
  } catch {
    app.log.warn(`the web UI is not built (no ${webRoot}/index.html): run npm run build`);
  }
  // Its own scope: swagger-ui registers @fastify/static (and its reply decorator) for itself.
  await app.register(async (web) => {
    await web.register(fastifyStatic, {
      root: webRoot,
      serve: false,
      // `.br`/`.gz` twins written by the build are sent to clients that accept them.
      preCompressed: true,
    });
    const send = (request: FastifyRequest, reply: FastifyReply, file: string) => {
      reply.header('Content-Security-Policy', uiContentSecurityPolicy(request.headers.host));
      // The same URL answers brotli, gzip or plain bytes (precompressed twins): caches must know.
      reply.header('Vary', 'Accept-Encoding');
      if (file.startsWith('assets/')) return reply.sendFile(file, IMMUTABLE);
      reply.header('Cache-Control', 'no-cache');
      return reply.sendFile(file, REVALIDATE);
    };
    web.get(
      '/*',
      { schema: { hide: true }, config: { access: 'public' } },
      async (request, reply) => {
        const pathname = request.url.split('?', 1)[0] ?? '';
        const wanted = (request.params as { '*'?: string })['*'] ?? '';
        const file = isApiPath(pathname) ? null : await buildFile(webRoot, wanted);
        if (file !== null) return send(request, reply, file);
        const page =
          !isApiPath(pathname) && acceptsHtml(request.headers.accept)
            ? await buildFile(webRoot, 'index.html')
            : null;
        if (page !== null) return send(request, reply, page);
        reply.callNotFound();
        return reply;
      },
    );
  });
}
