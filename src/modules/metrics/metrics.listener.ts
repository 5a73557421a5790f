/**
 * The metrics on an address of their own (METRICS_ADDRESS), for a Prometheus that reaches the
 * panel's machine on a private network or loopback: `GET /metrics` without a token, and nothing
 * else (404). Whoever can reach the address can read the metrics: binding it where only the
 * scraper reaches is the protection.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, type MetricsAddress } from '../../config.js';
import { AppError } from '../../errors.js';
import { toErrorReply } from '../../http/errors.js';
import type { Logger } from '../../log.js';
import { METRICS_PATH } from './metrics.routes.js';
import type { PanelMetrics } from './metrics.service.js';

/** What a MetricsListener is made from. */
export interface MetricsListenerDeps {
  readonly metrics: PanelMetrics;
  readonly address: MetricsAddress;
  readonly log: Logger;
}

export class MetricsListener {
  #server: Server | null = null;
  readonly #deps: MetricsListenerDeps;

  constructor(deps: MetricsListenerDeps) {
    this.#deps = deps;
  }

  /**
   * Listens; rejects with a ConfigError naming METRICS_ADDRESS when the address cannot be had
   * (taken, not an address of this machine, a name that does not resolve).
   */
  async listen(): Promise<void> {
    const { host, port } = this.#deps.address;
    const server = createServer((request, response) => {
      void this.#answer(request.method, request.url, response);
    });
    // Nothing here is slow to send: a client may not hold a connection open by trickling in.
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    server.keepAliveTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error) => {
        const code = 'code' in error && typeof error.code === 'string' ? error.code : error.message;
        reject(new ConfigError('METRICS_ADDRESS', `cannot listen on ${host}:${port} (${code})`));
      });
      server.listen({ host, port }, resolve);
    });
    server.on('error', (error) => {
      this.#deps.log.error({ err: error }, 'the metrics listener failed');
    });
    this.#server = server;
  }

  /** Where it listens (`http://host:port`), once it does; the port is the bound one. */
  url(): string | null {
    const address = this.#server?.address() as AddressInfo | null | undefined;
    if (!address) return null;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}${METRICS_PATH}`;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = null;
    const closed = new Promise<void>((resolve) => {
      server.close(() => {
        resolve();
      });
    });
    server.closeAllConnections();
    await closed;
  }

  async #answer(
    method: string | undefined,
    url: string | undefined,
    response: ServerResponse,
  ): Promise<void> {
    const path = (url ?? '').split('?', 1)[0];
    try {
      if ((method !== 'GET' && method !== 'HEAD') || path !== METRICS_PATH) {
        throw new AppError(
          'NOT_FOUND',
          `Route ${method ?? ''} ${(path ?? '').slice(0, 200)} not found`,
        );
      }
      const text = await this.#deps.metrics.render();
      response.writeHead(200, {
        'Content-Type': this.#deps.metrics.contentType,
        'Cache-Control': 'no-store',
        'Content-Length': Buffer.byteLength(text),
      });
      response.end(method === 'HEAD' ? undefined : text);
    } catch (error) {
      const body = toErrorReply(error);
      if (body.statusCode >= 500) this.#deps.log.error({ err: error }, 'a metrics scrape failed');
      const payload = JSON.stringify({
        message: body.message,
        code: body.code,
        statusCode: body.statusCode,
      });
      response.writeHead(body.statusCode, {
        'Content-Type': 'application/json; charset=utf-8',
        'Content-Length': Buffer.byteLength(payload),
      });
      response.end(payload);
    }
  }
}
