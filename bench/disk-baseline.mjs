// The baseline of the file benchmark: the same bytes written and read with plain streams, in a
// process of its own, so the disk's (and the page cache's) own speed on this machine is known.
//   node bench/disk-baseline.mjs write <source> <target>   stream copy, then fsync
//   node bench/disk-baseline.mjs read <file>               stream read, bytes discarded
// Prints one JSON line: { bytes, ms, fsyncMs? }.
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const [mode, source, target] = process.argv.slice(2);
const started = performance.now();
let bytes = 0;
const result = {};
if (mode === 'write' && source && target) {
  const counter = createReadStream(source);
  counter.on('data', (chunk) => {
    bytes += chunk.length;
  });
  await pipeline(counter, createWriteStream(target));
  result.ms = performance.now() - started;
  const syncStarted = performance.now();
  const handle = await open(target, 'r+');
  await handle.sync();
  await handle.close();
  result.fsyncMs = performance.now() - syncStarted;
} else if (mode === 'read' && source) {
  await pipeline(
    createReadStream(source),
    new Writable({
      write(chunk, _encoding, callback) {
        bytes += chunk.length;
        callback();
      },
    }),
  );
  result.ms = performance.now() - started;
} else {
  process.stderr.write('usage: disk-baseline.mjs write <source> <target> | read <file>\n');
  process.exit(2);
}
process.stdout.write(`${JSON.stringify({ bytes, ...result })}\n`);
