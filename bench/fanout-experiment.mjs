// What bounds the console fan-out, measured outside the panel: a WebSocket server (the panel's
// own `ws`) sends lines shaped like the line printer's to N clients in another process, the way
// the panel does today and two other ways, as fast as the clients take them, for 3 s each:
//   per line   one frame per line per client (ConsoleHub today: one writev per frame)
//   corked     the same frames, each socket corked for a whole chunk of output (~650 lines,
//              one 64 KiB pipe read), so one writev carries many frames
//   batched    one frame per chunk per client holding every line ({"type":"logs","lines":[…]})
// Reports lines/s per client and the server's CPU time per line per client.
//   node bench/fanout-experiment.mjs [clients=100]
// Not part of `npm run bench`; docs/benchmarks.md quotes it.
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process'; // eslint-disable-line no-restricted-imports -- the clients run in their own process
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setImmediate, setTimeout } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { WebSocketServer } from 'ws';
import { ConsoleReader } from './lib/ws-reader.mjs';

const SECONDS = 3;
const LINES_PER_CHUNK = 650;
const FILLER =
  ' [12:34:56] [Server thread/INFO]: <Steve> the quick brown fox jumps over the lazy dog';
const MODES = ['per line', 'corked', 'batched'];

if (process.argv[2] === '--clients') {
  // The client process: N readers that count bytes.
  const [port, count] = process.argv.slice(3).map(Number);
  const readers = [];
  for (let i = 0; i < count; i++) {
    readers.push(await ConsoleReader.open({ port, server: 'x', token: 'x' }));
  }
  process.on('message', () => {
    process.send({ bytes: readers.reduce((sum, reader) => sum + reader.bytes, 0) });
  });
  process.send({ ready: true });
} else {
  const count = Number(process.argv[2] ?? 100);
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((resolve) => server.once('listening', resolve));
  const sockets = [];
  server.on('connection', (socket) => {
    sockets.push(socket);
    socket.send(JSON.stringify({ type: 'history', lines: [] }));
  });
  const child = fork(
    fileURLToPath(import.meta.url),
    ['--clients', String(server.address().port), String(count)],
    { stdio: 'inherit' },
  );
  const next = () => new Promise((resolve) => child.once('message', resolve));
  await next();
  const clientBytes = async () => {
    child.send('report');
    return (await next()).bytes;
  };
  const frameBytes = (text) => {
    const length = Buffer.byteLength(text);
    return length + (length < 126 ? 2 : length < 65536 ? 4 : 10);
  };

  for (const [index, mode] of MODES.entries()) {
    const before = await clientBytes();
    const cpu = process.cpuUsage();
    const started = performance.now();
    let lines = 0;
    let sentPerClient = 0;
    while (performance.now() - started < SECONDS * 1000) {
      // Never queue more than 1 MiB for a client: the clients set the pace.
      if (sockets.some((socket) => socket.bufferedAmount > 1 << 20)) {
        await setImmediate();
        continue;
      }
      const ts = new Date().toISOString();
      const us = Number(process.hrtime.bigint() / 1000n);
      const texts = [];
      for (let i = 0; i < LINES_PER_CHUNK; i++) {
        texts.push(
          JSON.stringify({ type: 'log', line: `B ${index} ${lines++} ${us}${FILLER}`, ts }),
        );
      }
      if (mode === 'batched') {
        const batch = `{"type":"logs","lines":[${texts.join(',')}]}`;
        for (const socket of sockets) socket.send(batch);
        sentPerClient += frameBytes(batch);
      } else {
        if (mode === 'corked') for (const socket of sockets) socket._socket.cork();
        for (const text of texts) for (const socket of sockets) socket.send(text);
        if (mode === 'corked') for (const socket of sockets) socket._socket.uncork();
        for (const text of texts) sentPerClient += frameBytes(text);
      }
      await setImmediate();
    }
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    // Let the clients take the rest, then see what share of the bytes reached them.
    await setTimeout(1_000);
    const received = (await clientBytes()) - before;
    const share = received / (sentPerClient * count);
    process.stdout.write(
      `${mode.padEnd(9)} ${count} clients: ${((lines * share) / elapsed).toFixed(0).padStart(7)} lines/s ` +
        `per client, server CPU ${(((used.user + used.system) / lines / count) * 1).toFixed(2)} µs ` +
        `per line per client (${(share * 100).toFixed(1)} % of the bytes arrived)\n`,
    );
  }
  child.kill();
  server.close();
}
