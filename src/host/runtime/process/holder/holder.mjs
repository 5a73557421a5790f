// A server's holder: the small process that holds a game server's standard input, output and
// error, so that the game keeps running, and its output keeps being read, while the panel is
// stopped, restarted or upgraded (docs/runtimes.md, "Servers outlive the panel").
//
//   node holder.mjs <folder> [<uid> <gid>]
//
// Started by the panel detached (a session of its own: closing the panel's terminal or stopping
// its service does not reach it), in the server's cgroup, as the server's own user: a root panel
// passes the uid and gid, and the holder drops to them before it does anything else. It listens
// on `<folder>/holder.sock` (a folder only that user and the panel can enter), says `ready` on
// fd 3, and waits for the panel's `start`. Then it runs the server's command (the panel's sandbox
// wrapper included) and keeps the last MAX_KEPT_BYTES of its output, so a panel that comes back
// shows what was printed while it was away. It ends when the panel, having heard the server's
// exit, says `release`; or when no panel asks it to start anything within START_WAIT_MS.
// It imports nothing but Node's own modules and protocol.mjs, so it runs from its source file.
import { spawn } from 'node:child_process';
import { closeSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import {
  KIND_MESSAGE,
  KIND_STDERR,
  KIND_STDOUT,
  PROTOCOL_VERSION,
  frame,
  frameReader,
  messageFrame,
} from './protocol.mjs';

const [folder, uidText, gidText] = process.argv.slice(2);
if (folder === undefined) {
  process.stderr.write('usage: holder.mjs <folder> [<uid> <gid>]\n');
  process.exit(64);
}
if (uidText !== undefined) {
  // The server's own user, for good: supplementary groups, group, then user (the order that
  // leaves no privilege behind), checked.
  const uid = Number(uidText);
  const gid = Number(gidText);
  process.setgroups([gid]);
  process.setgid(gid);
  process.setuid(uid);
  if (process.getuid() !== uid || process.geteuid() !== uid || process.getegid() !== gid) {
    process.stderr.write('holder: could not become the server user\n');
    process.exit(70);
  }
}

/** Output kept for a panel that comes back (the console shows its last 1000 lines of it). */
const MAX_KEPT_BYTES = 2 * 1024 * 1024;
/** Past this much output unsent to a slow panel, the server's output waits (it is not lost). */
const MAX_UNSENT_BYTES = 8 * 1024 * 1024;
const START_WAIT_MS = 30_000;
/** After the server's exit, how long output still in its pipes may take to arrive. */
const DRAIN_MS = 1_000;

const socketPath = path.join(folder, 'holder.sock');

/** @type {{ kind: number, data: Buffer }[]} */
const kept = [];
let keptBytes = 0;
let lostBytes = 0;
/** @type {import('node:child_process').ChildProcess | null} */
let child = null;
let startedAt = null;
let exit = null;
let meta = null;
let inputClosed = false;
/** The panel's connection, and whether it asked for the output (`attach`). */
let panel = null;
let live = false;

const startTimer = setTimeout(() => {
  if (child === null) finish(1);
}, START_WAIT_MS);

function keep(kind, data) {
  kept.push({ kind, data });
  keptBytes += data.length;
  while (keptBytes > MAX_KEPT_BYTES && kept.length > 1) {
    const dropped = kept.shift();
    keptBytes -= dropped.data.length;
    lostBytes += dropped.data.length;
  }
}

function send(buffer) {
  if (panel === null || panel.destroyed) return;
  panel.write(buffer);
  if (panel.writableLength > MAX_UNSENT_BYTES && child !== null) {
    child.stdout?.pause();
    child.stderr?.pause();
  }
}

function resumeOutput() {
  child?.stdout?.resume();
  child?.stderr?.resume();
}

function onOutput(kind) {
  return (data) => {
    keep(kind, data);
    if (live) send(frame(kind, data));
  };
}

function start(request) {
  if (child !== null) return;
  clearTimeout(startTimer);
  meta = request.meta ?? null;
  const [program, ...args] = request.argv;
  child = spawn(program, args, {
    cwd: request.cwd,
    env: request.env,
    // The leader of a process group of its own, as the panel expects to signal it.
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  child.stdout.on('data', onOutput(KIND_STDOUT));
  child.stderr.on('data', onOutput(KIND_STDERR));
  child.stdout.on('error', () => undefined);
  child.stderr.on('error', () => undefined);
  child.stdin.on('error', () => {
    if (inputClosed) return;
    inputClosed = true;
    send(messageFrame({ type: 'input-closed' }));
  });
  child.once('spawn', () => {
    startedAt = new Date().toISOString();
    send(messageFrame({ type: 'started', pid: child.pid, startedAt }));
  });
  child.once('error', (error) => {
    // Never spawned (no such program): there will be no exit.
    if (startedAt !== null) return;
    exit = { code: null, signal: null };
    send(messageFrame({ type: 'start-failed', message: error.message }));
  });
  child.once('exit', (code, signal) => {
    // What the server printed last is read before its exit is told, for a second at most.
    const closed = (stream) =>
      new Promise((resolve) => {
        if (stream.closed || stream.destroyed) resolve();
        else stream.once('close', resolve);
      });
    const drained = Promise.all([closed(child.stdout), closed(child.stderr)]);
    const timeout = new Promise((resolve) => setTimeout(resolve, DRAIN_MS));
    void Promise.race([drained, timeout]).then(() => {
      exit = { code, signal };
      if (live) send(messageFrame({ type: 'exit', ...exit }));
    });
  });
}

function onMessage(message) {
  switch (message.type) {
    case 'start':
      start(message);
      return;
    case 'attach':
      if (live) return;
      for (const { kind, data } of kept) send(frame(kind, data));
      send(messageFrame({ type: 'replayed', lostBytes }));
      live = true;
      if (inputClosed) send(messageFrame({ type: 'input-closed' }));
      if (exit !== null && startedAt !== null) send(messageFrame({ type: 'exit', ...exit }));
      return;
    case 'input':
      if (child === null || inputClosed || !child.stdin.writable) {
        if (!inputClosed) send(messageFrame({ type: 'input-closed' }));
        inputClosed = true;
        return;
      }
      child.stdin.write(`${message.line}\n`);
      return;
    case 'release':
      finish(0);
      return;
    default:
      return;
  }
}

function finish(status) {
  rmSync(socketPath, { force: true });
  process.exit(status);
}

const server = createServer((socket) => {
  // One panel at a time: a new one (the panel started again) takes over from the old.
  if (panel !== null) panel.destroy();
  panel = socket;
  live = false;
  resumeOutput();
  socket.on('error', () => undefined);
  socket.on('drain', resumeOutput);
  socket.on('close', () => {
    if (panel !== socket) return;
    panel = null;
    live = false;
    resumeOutput();
  });
  const reader = frameReader(
    (kind, payload) => {
      if (kind !== KIND_MESSAGE) return;
      let message;
      try {
        message = JSON.parse(payload.toString('utf8'));
      } catch {
        socket.destroy();
        return;
      }
      onMessage(message);
    },
    () => socket.destroy(),
  );
  socket.on('data', (chunk) => reader.push(chunk));
  socket.write(
    messageFrame({
      type: 'hello',
      version: PROTOCOL_VERSION,
      holder: process.pid,
      pid: child?.pid ?? null,
      startedAt,
      exit: startedAt === null ? null : exit,
      meta,
    }),
  );
});

rmSync(socketPath, { force: true });
server.listen(socketPath, () => {
  try {
    writeSync(3, 'ready\n');
    closeSync(3);
  } catch {
    // Started by hand, without the panel's pipe: nobody to tell.
  }
});
server.on('error', (error) => {
  process.stderr.write(`holder: ${error.message}\n`);
  process.exit(71);
});
