// A minimal WebSocket client for the console benchmark. It does the opening handshake over a
// plain TCP socket and then parses the server's frames itself, reading each line's sequence
// number and timestamp straight from the bytes: a general client (ws) would spend more CPU per
// message than the panel under test, on a machine with two cores. Only what a console socket
// needs is handled: unmasked text frames from the server, close, ping.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { Histogram } from './histogram.mjs';

/** Every log event starts with these bytes; the printer's lines start with "B " or "E ". */
const LOG_PREFIX = Buffer.from('{"type":"log","line":"');
const HISTORY_PREFIX = Buffer.from('{"type":"history"');
const B = 0x42;
const E = 0x45;
const SPACE = 0x20;
/** The panel's notice where it dropped lines it could not show: `[panel] <n> lines skipped: …`. */
const SKIPPED_PREFIX = Buffer.from('[panel] ');
const SKIPPED_SUFFIX = Buffer.from(' lines skipped');

/** Reads a decimal integer at `offset`; returns [value, offset after it]. */
function readNumber(buffer, offset, end) {
  let value = 0;
  let i = offset;
  for (; i < end; i++) {
    const c = buffer[i] - 0x30;
    if (c < 0 || c > 9) break;
    value = value * 10 + c;
  }
  return [value, i];
}

export class ConsoleReader {
  /** Lines of the current run received, their latency, and where the sequence had gaps. */
  run = null;
  closed = false;
  closeInfo = null;
  historyReceived = false;
  bytes = 0;
  /** Every log message received, whatever its line, and the lines the panel said it skipped. */
  logLines = 0;
  skippedLines = 0;
  #socket = null;
  #pending = null;
  #onHistory = null;

  /**
   * Opens `/ws/servers/<server>/console` on 127.0.0.1:`port` with `token`. With `read: false`
   * the socket stops reading right after the history (a client that never reads).
   */
  static open({ port, server, token, read = true, timeoutMs = 10_000 }) {
    const reader = new ConsoleReader();
    return reader.#open({ port, server, token, read, timeoutMs }).then(() => reader);
  }

  #open({ port, server, token, read, timeoutMs }) {
    return new Promise((resolve, reject) => {
      const key = randomBytes(16).toString('base64');
      const socket = connect({ host: '127.0.0.1', port, noDelay: true });
      this.#socket = socket;
      let head = Buffer.alloc(0);
      let upgraded = false;
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('console socket: no history within the time limit'));
      }, timeoutMs);
      this.#onHistory = () => {
        clearTimeout(timer);
        if (!read) socket.pause();
        resolve();
      };
      socket.on('connect', () => {
        socket.write(
          `GET /ws/servers/${encodeURIComponent(server)}/console HTTP/1.1\r\n` +
            `Host: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` +
            `Authorization: Bearer ${token}\r\n\r\n`,
        );
      });
      socket.on('data', (chunk) => {
        if (upgraded) {
          this.#frames(chunk);
          return;
        }
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
        if (!/^HTTP\/1\.1 101 /.test(status)) {
          clearTimeout(timer);
          socket.destroy();
          const error = new Error(`console socket refused: ${status}`);
          error.status = Number(status.split(' ')[1]);
          reject(error);
          return;
        }
        upgraded = true;
        if (head.length > end + 4) this.#frames(head.subarray(end + 4));
      });
      socket.on('error', (error) => {
        clearTimeout(timer);
        this.closed = true;
        this.closeInfo ??= { error: error.code ?? error.message };
        reject(error);
      });
      socket.on('close', () => {
        clearTimeout(timer);
        this.closed = true;
        this.closeInfo ??= { code: 1006 };
        reject(new Error('console socket closed before the history'));
      });
    });
  }

  /** Starts counting the lines of run `id` (earlier runs' lines are ignored). */
  startRun(id) {
    this.run = {
      id,
      received: 0,
      nextSeq: 0,
      gaps: 0,
      missing: 0,
      latency: new Histogram(),
      firstAt: null,
      lastAt: null,
      end: null,
    };
  }

  #frames(chunk) {
    this.bytes += chunk.length;
    const arrivedUs = Number(process.hrtime.bigint() / 1000n);
    let buffer = this.#pending === null ? chunk : Buffer.concat([this.#pending, chunk]);
    this.#pending = null;
    let offset = 0;
    while (buffer.length - offset >= 2) {
      const opcode = buffer[offset] & 0x0f;
      let length = buffer[offset + 1] & 0x7f;
      let header = 2;
      if (length === 126) {
        if (buffer.length - offset < 4) break;
        length = buffer.readUInt16BE(offset + 2);
        header = 4;
      } else if (length === 127) {
        if (buffer.length - offset < 10) break;
        length = buffer.readUInt32BE(offset + 2) * 2 ** 32 + buffer.readUInt32BE(offset + 6);
        header = 10;
      }
      if (buffer.length - offset < header + length) break;
      const start = offset + header;
      const end = start + length;
      if (opcode === 1) this.#message(buffer, start, end, arrivedUs);
      else if (opcode === 8) this.#closeFrame(buffer, start, end);
      else if (opcode === 9) this.#pong(buffer.subarray(start, end));
      offset = end;
    }
    if (offset < buffer.length) this.#pending = buffer.subarray(offset);
  }

  #message(buffer, start, end, arrivedUs) {
    if (LOG_PREFIX.compare(buffer, start, start + LOG_PREFIX.length) !== 0) {
      if (HISTORY_PREFIX.compare(buffer, start, start + HISTORY_PREFIX.length) === 0) {
        this.historyReceived = true;
        this.#onHistory?.();
      }
      return;
    }
    this.logLines += 1;
    let i = start + LOG_PREFIX.length;
    const kind = buffer[i];
    if (kind === SKIPPED_PREFIX[0]) {
      this.#skipNotice(buffer, i, end);
      return;
    }
    if ((kind !== B && kind !== E) || buffer[i + 1] !== SPACE) return;
    const run = this.run;
    let id;
    [id, i] = readNumber(buffer, i + 2, end);
    if (run === null || id !== run.id) return;
    if (kind === E) {
      const [count, j] = readNumber(buffer, i + 1, end);
      const [elapsedUs] = readNumber(buffer, j + 1, end);
      run.end = { count, elapsedUs, at: arrivedUs };
      return;
    }
    let seq;
    let sentUs;
    [seq, i] = readNumber(buffer, i + 1, end);
    [sentUs] = readNumber(buffer, i + 1, end);
    if (seq !== run.nextSeq) {
      run.gaps += 1;
      run.missing += Math.max(0, seq - run.nextSeq);
    }
    run.nextSeq = seq + 1;
    run.received += 1;
    run.latency.record(arrivedUs - sentUs);
    run.firstAt ??= sentUs;
    run.lastAt = arrivedUs;
  }

  #skipNotice(buffer, start, end) {
    if (SKIPPED_PREFIX.compare(buffer, start, start + SKIPPED_PREFIX.length) !== 0) return;
    const [count, after] = readNumber(buffer, start + SKIPPED_PREFIX.length, end);
    if (SKIPPED_SUFFIX.compare(buffer, after, after + SKIPPED_SUFFIX.length) === 0) {
      this.skippedLines += count;
    }
  }

  #closeFrame(buffer, start, end) {
    this.closeInfo = {
      code: end - start >= 2 ? buffer.readUInt16BE(start) : 1005,
      reason: buffer.subarray(start + 2, end).toString('utf8'),
    };
    this.closed = true;
    this.#socket?.end();
  }

  #pong(payload) {
    // Client frames must be masked; a zero mask leaves the payload as it is.
    const header = Buffer.from([0x8a, 0x80 | payload.length, 0, 0, 0, 0]);
    this.#socket?.write(Buffer.concat([header, payload]));
  }

  /** For a client opened with `read: false`: reads again, to see whether the panel cut it off. */
  resume() {
    this.#socket?.resume();
  }

  close() {
    if (!this.#socket || this.#socket.destroyed) return;
    // A close frame (masked, empty), then the end of the connection.
    this.#socket.end(Buffer.from([0x88, 0x80, 0, 0, 0, 0]));
    this.#socket.destroySoon?.();
  }

  destroy() {
    this.#socket?.destroy();
  }
}
