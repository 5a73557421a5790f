/**
 * What ssh2 (1.17) does not let an SFTP server do through its public API, done on its SFTP
 * object's own fields: advertise extensions in the VERSION answer (OpenSSH's `sftp` sends
 * `df`, `posix-rename` and `fsync` only to a server that advertised them), send EXTENDED_REPLY
 * packets (statvfs, limits), stop taking requests by not refilling the channel's incoming window,
 * and learn when the answers queued behind the client's window have gone out.
 *
 * This is the only file that touches those fields. `SftpWire` checks at construction that they
 * are there, so an ssh2 upgrade that moves them fails the first session loudly (and
 * test/sftp-session.test.ts), never silently.
 */
import type { SFTPWrapper } from 'ssh2';

/** What the packets are made of: the SFTP v3 response types used here. */
const SSH_FXP_VERSION = 2;
const SSH_FXP_EXTENDED_REPLY = 201;
/** The VERSION answer ssh2 sends on INIT: length 5, type 2, version 3. */
const PLAIN_VERSION = Buffer.from([0, 0, 0, 5, SSH_FXP_VERSION, 0, 0, 0, 3]);

/**
 * ssh2's channel windows (lib/Channel.js): the window it grants and the level under which it
 * grants more. Copied because ssh2 does not export them from its package entry.
 */
const MAX_WINDOW = 2 * 1024 * 1024;
const WINDOW_THRESHOLD = MAX_WINDOW / 2;

interface ProtocolLike {
  channelData(id: number, data: Buffer): void;
}

/** The fields of ssh2's SFTP object (lib/protocol/SFTP.js) this file reads and writes. */
interface Internals {
  _version: number;
  /** Answers waiting for the client's window, oldest first. */
  _buffer: Buffer[];
  _waitWindow: boolean;
  /** Called by the server when the client grants window while `_waitWindow`. */
  _chunkcb: (() => void) | undefined;
  /** Set by the server when `push` answered false: the window was not refilled. */
  _waitChanDrain?: boolean;
  _protocol: ProtocolLike;
  _client: { _protocol: { channelWindowAdjust(id: number, amount: number): void } };
  outgoing: { id: number; window: number; packetSize: number; state: string };
  incoming: { window: number };
  push(data: Buffer | null): unknown;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null;

function internalsOf(stream: SFTPWrapper): Internals {
  const s: unknown = stream;
  const ok =
    isObject(s) &&
    typeof s._version === 'number' &&
    Array.isArray(s._buffer) &&
    typeof s._waitWindow === 'boolean' &&
    typeof s.push === 'function' &&
    isObject(s._protocol) &&
    typeof s._protocol.channelData === 'function' &&
    isObject(s._client) &&
    isObject(s._client._protocol) &&
    typeof s._client._protocol.channelWindowAdjust === 'function' &&
    isObject(s.outgoing) &&
    typeof s.outgoing.window === 'number' &&
    typeof s.outgoing.packetSize === 'number' &&
    isObject(s.incoming) &&
    typeof s.incoming.window === 'number';
  if (!ok) throw new Error("ssh2's SFTP object is not the one this code was written for");
  return s as unknown as Internals;
}

export class SftpWire {
  readonly #s: Internals;
  #paused = false;
  #closed = false;
  /** ssh2's own `_chunkcb`, kept behind the accessor installed in the constructor. */
  #chunkcb: (() => void) | undefined;
  #waiters: (() => void)[] = [];

  constructor(stream: SFTPWrapper) {
    const s = internalsOf(stream);
    this.#s = s;

    // Incoming: while paused, tell the server the data was not taken, so it grants no more
    // window; the client can send what it was already granted, and then waits.
    const push = s.push.bind(s);
    s.push = (data) => {
      const taken = push(data);
      return this.#paused && data !== null ? false : taken;
    };

    // Outgoing: see every call the server makes when the client grants window, to wake those
    // waiting for the queued answers to go out. ssh2 sets `_chunkcb` anew each time the window
    // runs out; the accessor keeps its value and hands back a wrapper.
    this.#chunkcb = s._chunkcb;
    const drained = (): void => {
      this.#chunkcb?.call(s);
      if (s._buffer.length === 0) this.#wake();
    };
    Object.defineProperty(s, '_chunkcb', {
      configurable: true,
      enumerable: true,
      get: () => (this.#chunkcb === undefined ? undefined : drained),
      set: (value: (() => void) | undefined) => {
        this.#chunkcb = value;
      },
    });
  }

  /**
   * Makes ssh2's VERSION answer carry `extensions` (name, data). Only before the client's INIT
   * has arrived (false: too late, nothing changed).
   */
  advertise(extensions: readonly (readonly [string, string])[]): boolean {
    const s = this.#s;
    if (s._version !== -1) return false;
    const packet = versionPacket(extensions);
    const real = s._protocol;
    const proxy: ProtocolLike = new Proxy(real, {
      get: (target, key) => {
        if (key === 'channelData') {
          return (id: number, data: Buffer) => {
            if (s._protocol === proxy) s._protocol = real;
            // ssh2 counted the plain answer against the window; count the difference too.
            const extra = packet.length - data.length;
            if (
              data.equals(PLAIN_VERSION) &&
              s.outgoing.window >= extra &&
              packet.length <= s.outgoing.packetSize
            ) {
              s.outgoing.window -= extra;
              real.channelData(id, packet);
            } else {
              real.channelData(id, data);
            }
          };
        }
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? (value.bind(target) as unknown) : value;
      },
    });
    s._protocol = proxy;
    return true;
  }

  /** Sends an EXTENDED_REPLY to request `reqid`, after any answer already queued. */
  extendedReply(reqid: number, body: Buffer): void {
    const packet = Buffer.allocUnsafe(9 + body.length);
    packet.writeUInt32BE(packet.length - 4, 0);
    packet[4] = SSH_FXP_EXTENDED_REPLY;
    packet.writeUInt32BE(reqid, 5);
    body.copy(packet, 9);
    this.#send(packet);
  }

  /** Stops (true) or resumes (false) taking requests from the client. */
  pause(paused: boolean): void {
    if (this.#paused === paused) return;
    this.#paused = paused;
    const s = this.#s;
    if (paused || s._waitChanDrain !== true) return;
    // What ssh2's Channel does in `_read` once its reader wants more.
    s._waitChanDrain = false;
    if (s.incoming.window > WINDOW_THRESHOLD || s.outgoing.state === 'closed') return;
    const amount = MAX_WINDOW - s.incoming.window;
    s.incoming.window += amount;
    s._client._protocol.channelWindowAdjust(s.outgoing.id, amount);
  }

  /** Resolves once no answer waits for the client's window (at once when none does). */
  room(): Promise<void> {
    if (this.#closed || this.#s._buffer.length === 0 || this.#chunkcb === undefined) {
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** The session is over: nobody waits for room any more. */
  close(): void {
    this.#closed = true;
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  /** ssh2's sendOrBuffer: as much as the window and packet size allow now, the rest queued. */
  #send(packet: Buffer): void {
    const s = this.#s;
    if (s.outgoing.state !== 'open') return;
    if (s._buffer.length > 0) {
      s._buffer.push(packet);
      return;
    }
    const rest = this.#write(packet);
    if (rest !== undefined) s._buffer.push(rest);
  }

  /** ssh2's tryWritePayload: what did not fit, or undefined. */
  #write(packet: Buffer): Buffer | undefined {
    const s = this.#s;
    const out = s.outgoing;
    let p = 0;
    while (p < packet.length && out.window > 0) {
      const n = Math.min(packet.length - p, out.window, out.packetSize);
      out.window -= n;
      s._protocol.channelData(out.id, packet.subarray(p, p + n));
      p += n;
    }
    if (p === packet.length) return undefined;
    s._waitWindow = true;
    s._chunkcb = this.#drain;
    return packet.subarray(p);
  }

  /** ssh2's drainBuffer, for a queue that ends with a packet of ours. */
  readonly #drain = (): void => {
    const s = this.#s;
    this.#chunkcb = undefined;
    while (s._buffer.length > 0 && s.outgoing.state === 'open') {
      const first = s._buffer[0];
      if (first === undefined) break;
      const rest = this.#write(first);
      if (rest !== undefined) {
        s._buffer[0] = rest;
        return;
      }
      s._buffer.shift();
    }
  };
}

/** The SFTP v3 VERSION answer with extension pairs. */
function versionPacket(extensions: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = [Buffer.from([SSH_FXP_VERSION, 0, 0, 0, 3])];
  for (const [name, data] of extensions) parts.push(sftpString(name), sftpString(data));
  const body = Buffer.concat(parts);
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(body.length);
  return Buffer.concat([length, body]);
}

/** An SFTP string: its byte length (uint32), then its bytes. */
export function sftpString(value: string | Buffer): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value) : value;
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

/** uint64 values, big-endian, one after the other (statvfs, limits). */
export function uint64s(values: readonly number[]): Buffer {
  const body = Buffer.alloc(values.length * 8);
  values.forEach((value, index) => {
    body.writeBigUInt64BE(BigInt(Math.max(0, Math.floor(value))), index * 8);
  });
  return body;
}

/** The `count` strings an extended request carries, or null when it carries fewer. */
export function readStrings(data: Buffer | undefined, count: number): Buffer[] | null {
  const strings: Buffer[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (data === undefined || data.length - p < 4) return null;
    const length = data.readUInt32BE(p);
    p += 4;
    if (data.length - p < length) return null;
    strings.push(data.subarray(p, p + length));
    p += length;
  }
  return strings;
}
