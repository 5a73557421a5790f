/**
 * The Fastify plugins the routes build on: console sockets (`@fastify/websocket`), cookies, and
 * multipart uploads (`@fastify/multipart`).
 *
 * On close, servers are stopped (or let go of, `releaseServers`) before the console sockets
 * close, so people watching see the stop sequence to its end. Uploads are streamed to disk and
 * their limit (MAX_UPLOAD_BYTES) is counted there; the parser's own limit sits one byte above
 * it: at its limit the parser silently truncates.
 */
import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import websocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { MAX_INCOMING_BYTES } from '../modules/console/console.hub.js';
import type { App } from './types.js';

export async function registerPlugins(
  app: App,
  options: {
    readonly maxUploadBytes: Config['maxUploadBytes'];
    /** Stops the game servers or lets go of them, once; awaited before the sockets close. */
    readonly releaseServers: () => Promise<void>;
  },
): Promise<void> {
  const { releaseServers } = options;
  await app.register(websocket, {
    options: { maxPayload: MAX_INCOMING_BYTES },
    preClose: async function closeConsoles(this: FastifyInstance) {
      await releaseServers();
      for (const socket of this.websocketServer.clients) socket.close(1001, 'panel shutting down');
      await new Promise<void>((resolve) => {
        this.websocketServer.close(() => {
          resolve();
        });
      });
    },
  });
  await app.register(cookie);
  await app.register(multipart, {
    limits: {
      fileSize: (options.maxUploadBytes ?? Number.MAX_SAFE_INTEGER - 1) + 1,
      files: 100,
      parts: 120,
      fields: 20,
      fieldNameSize: 100,
      fieldSize: 64 * 1024,
      headerPairs: 100,
    },
  });
}
