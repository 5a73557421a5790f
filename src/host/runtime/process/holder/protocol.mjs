// The wire between the panel and a server's holder (holder.mjs), over the holder's Unix socket:
// frames of a 4-byte big-endian payload length, a 1-byte kind, then the payload. Kinds: a JSON
// message, or raw bytes the server wrote to its standard output or error (never re-encoded, so a
// line the game prints reaches the console as it was). Plain JavaScript with no import but Node's
// own, so that the holder runs from its source file without a build; the panel imports it too.

/** Version of the messages: a panel refuses a holder that speaks another (docs/runtimes.md). */
export const PROTOCOL_VERSION = 1;

export const KIND_MESSAGE = 1;
export const KIND_STDOUT = 2;
export const KIND_STDERR = 3;

/** No frame is larger: the holder reads output in chunks of at most 64 KiB. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** One frame, ready to write. */
export function frame(kind, payload) {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(payload.length, 0);
  header.writeUInt8(kind, 4);
  return Buffer.concat([header, payload]);
}

/** A JSON message as a frame. */
export function messageFrame(message) {
  return frame(KIND_MESSAGE, Buffer.from(JSON.stringify(message), 'utf8'));
}

/**
 * Splits a byte stream into frames: `push` every chunk read, `onFrame(kind, payload)` is called
 * for each whole frame. A frame longer than MAX_FRAME_BYTES, or of an unknown kind, is a broken
 * peer: `onError` is called once and nothing more is read.
 */
export function frameReader(onFrame, onError) {
  let pending = Buffer.alloc(0);
  let broken = false;
  return {
    push(chunk) {
      if (broken) return;
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 5) {
        const length = pending.readUInt32BE(0);
        const kind = pending.readUInt8(4);
        if (length > MAX_FRAME_BYTES || kind < KIND_MESSAGE || kind > KIND_STDERR) {
          broken = true;
          onError(new Error(`a broken frame (kind ${kind}, ${length} bytes)`));
          return;
        }
        if (pending.length < 5 + length) return;
        const payload = pending.subarray(5, 5 + length);
        pending = pending.subarray(5 + length);
        onFrame(kind, payload);
      }
    },
  };
}
