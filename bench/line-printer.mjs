// A stand-in game server for the console benchmark. It waits for commands on standard input:
//   run <id> <rate> <ms>   prints lines for <ms> milliseconds, <rate> lines per second (0: as
//                          fast as the pipe takes them), then "E <id> <count> <elapsed µs>"
//   stop                   exits 0
// The end line of each run is also appended to printer-runs.log in the working directory.
// Each line is "B <id> <seq> <µs> …" padded to LINE_BYTES with text shaped like a game log, where
// <µs> is the monotonic clock (CLOCK_MONOTONIC, shared by every process on the machine) when the
// line was written, so a reader can tell the end-to-end latency of each line.
import process from 'node:process';
import { once } from 'node:events';
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setImmediate, setTimeout } from 'node:timers/promises';

const RUNS_FILE = 'printer-runs.log';
const LINE_BYTES = 100;
const FILLER =
  ' [12:34:56] [Server thread/INFO]: <Steve> the quick brown fox jumps over the lazy dog';
/** At a fixed rate, output is written in batches at most this far apart. */
const TICK_MS = 1;
/** Lines per write at most: when printing as fast as possible, or catching up. */
const MAX_BATCH = 500;

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

function line(id, seq, us) {
  const head = `B ${id} ${seq} ${us}`;
  return head + FILLER.slice(0, LINE_BYTES - 1 - head.length) + '\n';
}

/** Writes `text`, waiting for the pipe to drain when Node buffers it. */
async function write(text) {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function run(id, rate, ms) {
  const start = process.hrtime.bigint();
  const elapsedMs = () => Number(process.hrtime.bigint() - start) / 1e6;
  let seq = 0;
  if (rate <= 0) {
    // As fast as possible: the pipe (and so the panel reading it) sets the pace.
    let batches = 0;
    while (elapsedMs() < ms) {
      const us = nowUs();
      let text = '';
      for (let i = 0; i < MAX_BATCH; i++) text += line(id, seq++, us);
      await write(text);
      // Let stdin and the event loop breathe now and then, without measurable cost.
      if (++batches % 64 === 0) await setImmediate();
    }
  } else {
    const total = Math.round((rate * ms) / 1000);
    while (seq < total && elapsedMs() < ms + 5_000) {
      const due = Math.min(total, Math.floor((rate * elapsedMs()) / 1000));
      if (due > seq) {
        // Behind schedule (the pipe was full): catch up in batches, each stamped when written.
        const us = nowUs();
        let text = '';
        const until = Math.min(due, seq + MAX_BATCH);
        while (seq < until) text += line(id, seq++, us);
        await write(text);
        if (seq < due) continue;
      }
      await setTimeout(TICK_MS);
    }
  }
  const elapsedUs = Math.round(Number(process.hrtime.bigint() - start) / 1000);
  // Also kept in the server's directory, for runs whose last line never reached a client.
  appendFileSync(RUNS_FILE, `E ${id} ${seq} ${elapsedUs}\n`);
  await write(`E ${id} ${seq} ${elapsedUs}\n`);
}

process.on('SIGTERM', () => process.exit(0));
process.stdout.write('line printer ready\n');

let queue = Promise.resolve();
const input = createInterface({ input: process.stdin });
input.on('line', (text) => {
  const [command, ...args] = text.trim().split(/\s+/);
  if (command === 'stop') process.exit(0);
  if (command !== 'run' || args.length !== 3) {
    process.stdout.write(`unknown command: ${text}\n`);
    return;
  }
  const [id, rate, ms] = args.map(Number);
  queue = queue.then(() => run(id, rate, ms));
});
input.on('close', () => process.exit(0));
