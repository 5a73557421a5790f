// The baseline of the API benchmark: a bare Fastify (the panel's own copy) answering the same
// JSON bodies the panel answered, with no authentication, database, hooks or logging. With a
// file, it also streams that file at GET /file (a read stream in 4 MiB chunks, as large as the
// panel's download reads, and a Content-Length), to tell the cost of HTTP on loopback from the
// panel's own; and with an upload target, it takes a multipart upload at POST /upload the way a
// minimal Fastify would that keeps the panel's promise (@fastify/multipart, the part piped into
// a temporary file beside the target, fsync, then renamed into place).
//   node bench/bare-server.mjs <routes.json> [<file> [<upload target>]]
// routes.json: { "<path>": <body>, … }
// Prints "listening <port>" once it listens on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
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
      .send(createReadStream(file, { highWaterMark: 4 * 1024 * 1024 })),
  );
}
const uploadTarget = process.argv[4];
if (uploadTarget) {
  await app.register(multipart, { limits: { fileSize: Number.MAX_SAFE_INTEGER } });
  app.post('/upload', async (request) => {
    for await (const part of request.files()) {
      const temp = path.join(
        path.dirname(uploadTarget),
        `.bare-tmp-${randomBytes(8).toString('hex')}`,
      );
      await pipeline(part.file, createWriteStream(temp));
      const handle = await open(temp, 'r+');
      await handle.sync();
      await handle.close();
      await rename(temp, uploadTarget);
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
