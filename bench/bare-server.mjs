// The baseline of the API benchmark: a bare Fastify (the panel's own copy) answering the same
// JSON bodies the panel answered, with no authentication, database, hooks or logging. With a
// file, it also streams that file at GET /file, as the panel's download does (a read stream
// in 1 MiB chunks and a Content-Length), to tell the cost of HTTP on loopback from the panel's
// own; and with an upload target, it takes a multipart upload at POST /upload the
// way a minimal Fastify would (@fastify/multipart, a stream into a file, then fsync).
//   node bench/bare-server.mjs <routes.json> [<file> [<upload target>]]
// routes.json: { "<path>": <body>, … }
// Prints "listening <port>" once it listens on 127.0.0.1.
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import process from 'node:process';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import Fastify from 'fastify';

const routes = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8'));
const app = Fastify({ logger: false });
for (const [url, body] of Object.entries(routes)) {
  app.get(url, () => body);
}
const file = process.argv[3];
if (file) {
  const { size } = statSync(file);
  app.get('/file', (_request, reply) =>
    reply
      .header('content-type', 'application/octet-stream')
      .header('content-length', String(size))
      .send(createReadStream(file, { highWaterMark: 1024 * 1024 })),
  );
}
const uploadTarget = process.argv[4];
if (uploadTarget) {
  await app.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER } });
  app.post('/upload', async (request) => {
    for await (const part of request.files()) {
      await pipeline(part.file, createWriteStream(uploadTarget));
      const handle = await open(uploadTarget, 'r+');
      await handle.sync();
      await handle.close();
    }
    return { ok: true };
  });
}
process.on('SIGTERM', () => {
  app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${app.server.address().port}\n`);
