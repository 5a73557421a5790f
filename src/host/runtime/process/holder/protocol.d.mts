/** Types of protocol.mjs: the wire between the panel and a server's holder. */

export declare const PROTOCOL_VERSION: number;
export declare const KIND_MESSAGE: 1;
export declare const KIND_STDOUT: 2;
export declare const KIND_STDERR: 3;
export declare const MAX_FRAME_BYTES: number;

export type FrameKind = 1 | 2 | 3;

export declare function frame(kind: FrameKind, payload: Buffer): Buffer;
export declare function messageFrame(message: HolderRequest | HolderMessage): Buffer;
export declare function frameReader(
  onFrame: (kind: FrameKind, payload: Buffer) => void,
  onError: (error: Error) => void,
): { push(chunk: Buffer): void };

/** How the server's process ended, as Node's child process reports it. */
export interface HolderExit {
  readonly code: number | null;
  readonly signal: string | null;
}

/** What the panel asks of a holder. */
export type HolderRequest =
  /** Start the server (once): the program and its arguments, without a shell. */
  | {
      readonly type: 'start';
      readonly argv: readonly string[];
      readonly cwd: string;
      readonly env: Readonly<Record<string, string>>;
      /** Kept by the holder and answered in every `hello`: what the panel needs to take over. */
      readonly meta: Readonly<Record<string, unknown>>;
    }
  /** Send what was kept of the output, then the output as it comes. */
  | { readonly type: 'attach' }
  /** One line for the server's standard input (the newline is added). */
  | { readonly type: 'input'; readonly line: string }
  /** The panel has taken note of the exit: the holder ends. */
  | { readonly type: 'release' };

/** What a holder tells the panel. */
export type HolderMessage =
  /** First on every connection: where the holder is. */
  | {
      readonly type: 'hello';
      readonly version: number;
      /** The holder's own pid. */
      readonly holder: number;
      readonly pid: number | null;
      readonly startedAt: string | null;
      readonly exit: HolderExit | null;
      readonly meta: Readonly<Record<string, unknown>> | null;
    }
  | { readonly type: 'started'; readonly pid: number; readonly startedAt: string }
  | { readonly type: 'start-failed'; readonly message: string }
  /** Everything kept was sent: what follows is live. */
  | { readonly type: 'replayed'; readonly lostBytes: number }
  | { readonly type: 'input-closed' }
  | ({ readonly type: 'exit' } & HolderExit);
