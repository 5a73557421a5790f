// A minimal WebSocket client for the console benchmark (console protocol v2). It does the opening
// handshake over a plain TCP socket and then parses the server's frames itself: in each
// `{"type":"log","lines":[…]}` batch it walks the array and reads each printer line's run id,
// sequence number and timestamp (`B <id> <seq> <µs> …`) straight from the bytes, one `memchr`
// per line to find its end. A general client (ws plus JSON.parse) would spend more CPU per line
// than the panel under test, on a machine with two cores. Only what a console socket needs is
// handled: unmasked text frames from the server, close, ping.
//
// The socket is read through `onread` (one buffer per reader, no allocation per read), which
// also makes a client that does not read stop at the TCP level: the kernel's receive buffer
// fills, the window closes and the panel's writes back up, as with a browser tab that hangs.
import { Buffer } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { Histogram } from './histogram.mjs';

/** Where the frames of protocol v2 differ: `{"type":"` then the type. */
const TYPE_AT = '{"type":"'.length;
const LOG_PREFIX = Buffer.from('{"type":"log","lines":[');
const SKIPPED_PREFIX = Buffer.from('{"type":"skipped","lines":');
const HISTORY_PREFIX = Buffer.from('{"type":"history","lines":[');
const STATUS_PREFIX = Buffer.from('{"type":"status"');
const B = 0x42;
const E = 0x45;
const SPACE = 0x20;
const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const READ_BUFFER_BYTES = 256 * 1024;

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

/**
 * The closing quote of the JSON string whose content starts at `from`, or -1 when the frame
 * ends first. A quote preceded by an odd number of backslashes is part of the content.
 */
function closingQuote(buffer, from, end) {
  let q = buffer.indexOf(QUOTE, from);
  while (q >= 0 && q < end && buffer[q - 1] === BACKSLASH) {
    let slashes = 1;
    while (buffer[q - 1 - slashes] === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) break;
    q = buffer.indexOf(QUOTE, q + 1);
  }
  return q < end ? q : -1;
}

export class ConsoleReader {
  /** The current run's figures (see startRun); null before the first. */
  run = null;
  closed = false;
  closeInfo = null;
  historyReceived = false;
  bytes = 0;
  /** Every line received in a `log` batch, whatever its text, and the batches. */
  logLines = 0;
  logFrames = 0;
  /** What `skipped` frames announced: frames, and the lines in them. */
  skippedFrames = 0;
  skippedLines = 0;
  statusFrames = 0;
  #socket = null;
  #pending = null;
  #onHistory = null;
  /** False for a client that does not read: `onread` then stops reading at once. */
  #reading = true;
  #upgraded = false;
  #head = Buffer.alloc(0);
  #onHead = null;

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
      const socket = connect({
        host: '127.0.0.1',
        port,
        noDelay: true,
        onread: {
          buffer: Buffer.allocUnsafe(READ_BUFFER_BYTES),
          callback: (nread, buffer) => this.#onRead(buffer.subarray(0, nread)),
        },
      });
      this.#socket = socket;
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error('console socket: no history within the time limit'));
      }, timeoutMs);
      this.#onHistory = () => {
        clearTimeout(timer);
        if (!read) this.#reading = false;
        resolve();
      };
      this.#onHead = (status) => {
        clearTimeout(timer);
        socket.destroy();
        const error = new Error(`console socket refused: ${status}`);
        error.status = Number(status.split(' ')[1]);
        reject(error);
      };
      socket.on('connect', () => {
        socket.write(
          `GET /ws/servers/${encodeURIComponent(server)}/console HTTP/1.1\r\n` +
            `Host: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` +
            `Authorization: Bearer ${token}\r\n\r\n`,
        );
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

  /** Bytes read into the shared buffer (valid only during the call); false stops reading. */
  #onRead(chunk) {
    if (this.#upgraded) {
      this.#frames(chunk);
      return this.#reading;
    }
    this.#head = Buffer.concat([this.#head, chunk]);
    const end = this.#head.indexOf('\r\n\r\n');
    if (end < 0) return true;
    const status = this.#head.subarray(0, this.#head.indexOf('\r\n')).toString('latin1');
    if (!/^HTTP\/1\.1 101 /.test(status)) {
      this.#onHead(status);
      return false;
    }
    this.#upgraded = true;
    const rest = this.#head.subarray(end + 4);
    this.#head = null;
    if (rest.length > 0) this.#frames(rest);
    return this.#reading;
  }

  /**
   * Starts counting the lines of run `id` (lines of other runs are ignored): lines received,
   * their latency (the printer's timestamp to the arrival of the bytes), where the sequence
   * jumped ahead (gaps) or back (out of order), and what `skipped` frames announced meanwhile.
   */
  startRun(id) {
    this.run = {
      id,
      received: 0,
      nextSeq: 0,
      gaps: 0,
      missing: 0,
      outOfOrder: 0,
      skippedFrames: 0,
      skippedLines: 0,
      frames: 0,
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
    // The read buffer is reused: what is kept of it must be copied.
    if (offset < buffer.length) {
      this.#pending =
        buffer === chunk ? Buffer.from(buffer.subarray(offset)) : buffer.subarray(offset);
    }
  }

  #message(buffer, start, end, arrivedUs) {
    switch (buffer[start + TYPE_AT]) {
      case 0x6c: // l
        if (LOG_PREFIX.compare(buffer, start, start + LOG_PREFIX.length) === 0) {
          this.#lines(buffer, start + LOG_PREFIX.length, end, arrivedUs);
        }
        return;
      case 0x73: // s
        if (SKIPPED_PREFIX.compare(buffer, start, start + SKIPPED_PREFIX.length) === 0) {
          const [lines] = readNumber(buffer, start + SKIPPED_PREFIX.length, end);
          this.skippedFrames += 1;
          this.skippedLines += lines;
          if (this.run !== null) {
            this.run.skippedFrames += 1;
            this.run.skippedLines += lines;
          }
        } else if (STATUS_PREFIX.compare(buffer, start, start + STATUS_PREFIX.length) === 0) {
          this.statusFrames += 1;
        }
        return;
      case 0x68: // h
        if (HISTORY_PREFIX.compare(buffer, start, start + HISTORY_PREFIX.length) === 0) {
          this.historyReceived = true;
          this.#onHistory?.();
        }
        return;
      default:
    }
  }

  /** The strings of a `lines` array, from just after its `[`. */
  #lines(buffer, i, end, arrivedUs) {
    const run = this.run;
    this.logFrames += 1;
    if (run !== null) run.frames += 1;
    let lines = 0;
    while (i < end && buffer[i] === QUOTE) {
      lines += 1;
      let from = i + 1;
      const kind = buffer[from];
      if ((kind === B || kind === E) && buffer[from + 1] === SPACE && run !== null) {
        // Inlined number reads: this runs for every line of every client.
        let id = 0;
        let j = from + 2;
        for (let c = buffer[j] - 0x30; c >= 0 && c <= 9; c = buffer[++j] - 0x30) id = id * 10 + c;
        if (id === run.id && buffer[j] === SPACE) {
          let seq = 0;
          for (let c = buffer[++j] - 0x30; c >= 0 && c <= 9; c = buffer[++j] - 0x30) {
            seq = seq * 10 + c;
          }
          let us = 0;
          if (buffer[j] === SPACE) {
            for (let c = buffer[++j] - 0x30; c >= 0 && c <= 9; c = buffer[++j] - 0x30) {
              us = us * 10 + c;
            }
          }
          if (kind === B) {
            if (seq !== run.nextSeq) {
              if (seq > run.nextSeq) {
                run.gaps += 1;
                run.missing += seq - run.nextSeq;
              } else run.outOfOrder += 1;
            }
            run.nextSeq = seq + 1;
            run.received += 1;
            run.latency.record(arrivedUs - us);
            run.firstAt ??= us;
            run.lastAt = arrivedUs;
          } else {
            // E <id> <count> <elapsed µs>
            run.end = { count: seq, elapsedUs: us, at: arrivedUs };
          }
        }
        from = j;
      }
      const q = closingQuote(buffer, from, end);
      if (q < 0 || buffer[q + 1] !== COMMA) break;
      i = q + 2;
    }
    this.logLines += lines;
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

  /** For a client opened with `read: false`: reads again (what waited, then what comes). */
  resume() {
    this.#reading = true;
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
