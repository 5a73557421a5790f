/**
 * What the file agent's methods (agent-methods.ts, agent-channels.ts) share for one stream: the
 * handles the panel was given (an opened file, a file channel, a folder being read: numbers
 * good for this stream only, all let go of when it ends), deny lists compiled from their lines
 * with the panel's own code, and the readers of the arguments every method takes. A value that
 * does not fit is a refused call (400 VALIDATION_FAILED), never a crash.
 */
import type { Readable, Writable } from 'node:stream';
import { AppError } from '../../errors.js';
import type { FileChannel, NamedStat, OpenedFile, PathGuard } from '../host.js';
import { compileDenylist, DENYLIST_LIMITS } from '../../templates/denylist.js';
import { BadValue, list, nullable, text, whole, type Reader } from './values.js';
import type { CallContext, Method } from './wire-server.js';

/** The most handles one stream may hold at once. */
const MAX_HANDLES = 4096;
/** Deny lists kept compiled, by their lines. */
const COMPILED_GUARDS = 16;

export type Held =
  | { readonly kind: 'file'; readonly file: OpenedFile }
  | { readonly kind: 'channel'; readonly channel: FileChannel }
  | { readonly kind: 'folder'; readonly folder: AsyncIterableIterator<readonly NamedStat[]> };

export class AgentSession {
  readonly #held = new Map<number, Held>();
  #last = 0;
  readonly #compiled = new Map<string, PathGuard>();

  /** Keeps `item` for later calls; answers its handle. */
  hold(item: Held): number {
    if (this.#held.size >= MAX_HANDLES) {
      throw new AppError('CONFLICT', `More than ${MAX_HANDLES} files are open at once`);
    }
    this.#held.set(++this.#last, item);
    return this.#last;
  }

  /** The item of the handle `value`, of `kind` (else 400: closed or never given). */
  heldAs<K extends Held['kind']>(value: unknown, kind: K): Extract<Held, { kind: K }> {
    const item = this.#held.get(whole(value, 'handle'));
    if (item?.kind !== kind) {
      throw new AppError('VALIDATION_FAILED', 'That handle is closed or was never given');
    }
    return item as Extract<Held, { kind: K }>;
  }

  /** Forgets the handle `value` (the item is the caller's to let go of); answers its item. */
  drop(value: unknown): Held | undefined {
    const id = whole(value, 'handle');
    const item = this.#held.get(id);
    this.#held.delete(id);
    return item;
  }

  /** A deny list from its lines, compiled with the panel's own code, kept for the next call. */
  readonly guard: Reader<PathGuard | null> = (value, what) => {
    const lines = nullable(list(text, DENYLIST_LIMITS.patterns))(value, what);
    if (lines === null || lines.length === 0) return null;
    const key = lines.join('\n');
    const known = this.#compiled.get(key);
    if (known) return known;
    const made = compileDenylist(lines).list;
    if (this.#compiled.size >= COMPILED_GUARDS) {
      const oldest = this.#compiled.keys().next();
      if (oldest.done !== true) this.#compiled.delete(oldest.value);
    }
    this.#compiled.set(key, made);
    return made;
  };

  /** Lets go of every handle still held (the stream ended); never rejects. */
  async release(): Promise<void> {
    const items = [...this.#held.values()];
    this.#held.clear();
    for (const item of items) {
      try {
        if (item.kind === 'file') await item.file.close();
        else if (item.kind === 'channel') await item.channel.abort();
        else await item.folder.return?.();
      } catch {
        // Letting go of one never stops the rest.
      }
    }
  }
}

/** A method whose arguments are read first: a value that does not fit is a 400. */
export function method(
  run: (args: readonly unknown[], call: CallContext) => Promise<unknown>,
  streams: { readonly input?: boolean; readonly output?: boolean } = {},
): Method {
  return {
    ...streams,
    run: async (args, call) => {
      try {
        return await run(args, call);
      } catch (error) {
        if (error instanceof BadValue) throw new AppError('VALIDATION_FAILED', error.message);
        throw error;
      }
    },
  };
}

/** Every method's first argument: the server's name (the storage refuses one no server has). */
export const serverOf = (args: readonly unknown[]): string => text(args[0], 'server');

/** A quota in bytes, or null: none. */
export const quota: Reader<number | null> = nullable(whole);

/** What a method that answers nothing answers. */
export const done = (): null => null;

export function inputOf(call: CallContext): Readable {
  if (call.input === null) throw new Error('a method with input was called without it');
  return call.input;
}

export function outputOf(call: CallContext): Writable {
  if (call.output === null) throw new Error('a method with output was called without it');
  return call.output;
}

/**
 * Progress events gathered: sent once a turn of the event loop (or at `most` items), and all of
 * them by `flush`, which the method calls before it answers.
 */
export function batched<T>(call: CallContext, most: number, event: (items: T[]) => unknown) {
  let items: T[] = [];
  let scheduled: NodeJS.Immediate | null = null;
  const flush = (): void => {
    if (scheduled !== null) clearImmediate(scheduled);
    scheduled = null;
    if (items.length === 0) return;
    const sent = items;
    items = [];
    call.event(event(sent));
  };
  return {
    add(item: T): void {
      items.push(item);
      if (items.length >= most) flush();
      else scheduled ??= setImmediate(flush);
    },
    flush,
  };
}
