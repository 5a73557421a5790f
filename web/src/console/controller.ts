/**
 * The console's connection, outside React: opens the socket, turns its frames into terminal
 * writes and status changes, and connects again with back-off when the network drops it, but not
 * when the panel closed it on purpose (4401, 4403, 4404, 4408). Everything it touches is handed
 * in (the socket constructor, the timers), so tests drive it without a browser.
 */
import type { ServerStatus } from '../components/StatusBadge';
import {
  CLOSE_MESSAGES,
  backoffDelay,
  closeReason,
  dimLine,
  linesText,
  parseFrame,
  skippedText,
  statusText,
  type CloseReason,
  type Notice,
} from './protocol';

export type Connection =
  | { readonly state: 'connecting' }
  | { readonly state: 'open' }
  /** Lost for a network reason; the next attempt is at `retryAt` (ms, the clock handed in). */
  | { readonly state: 'waiting'; readonly retryAt: number; readonly attempt: number }
  /** Closed by the panel for a reason that another attempt would not change. */
  | { readonly state: 'closed'; readonly reason: CloseReason; readonly message: string };

/** What the terminal and the page are told. */
export interface ConsoleSink {
  /** Forget what the terminal shows: the history that follows replaces it. */
  reset(): void;
  /** One write of terminal data (a batch of lines is always one call). */
  write(data: string): void;
  status(status: ServerStatus): void;
  connection(connection: Connection): void;
  /** A refused or failed command, as the panel words it. */
  error(message: string): void;
  /**
   * A feature's notice (the game asks for the Minecraft EULA…). Those of the server's current
   * run come again after each `reset`.
   */
  notice(notice: Notice): void;
}

/** The part of the browser's WebSocket the controller uses. */
export type SocketLike = Pick<
  WebSocket,
  'onopen' | 'onmessage' | 'onclose' | 'onerror' | 'readyState' | 'send' | 'close'
>;

export interface ConsoleDeps {
  readonly url: () => string;
  readonly openSocket: (url: string) => SocketLike;
  readonly sink: ConsoleSink;
  readonly setTimeout: (run: () => void, ms: number) => unknown;
  readonly clearTimeout: (handle: unknown) => void;
  readonly now: () => number;
}

export interface ConsoleController {
  /** Sends a command; false when the console is not connected (nothing was sent). */
  send(command: string): boolean;
  /** Connects now, whatever the state (the "Reconnect" button, or an early retry). */
  reconnect(): void;
  /** Closes for good: no more attempts, no more calls to the sink. */
  dispose(): void;
}

const OPEN = 1;

export function createConsoleController(deps: ConsoleDeps): ConsoleController {
  const { sink } = deps;
  let socket: SocketLike | null = null;
  let timer: unknown = null;
  let attempt = 0;
  let disposed = false;

  const connect = () => {
    if (disposed) return;
    if (timer !== null) deps.clearTimeout(timer);
    timer = null;
    detach();
    sink.connection({ state: 'connecting' });
    const current = deps.openSocket(deps.url());
    socket = current;
    current.onopen = () => {
      if (socket !== current) return;
      sink.connection({ state: 'open' });
    };
    current.onmessage = (event) => {
      if (socket !== current) return;
      const frame = parseFrame(event.data);
      if (frame === null) return;
      switch (frame.type) {
        case 'history':
          // A good connection: the next drop starts the back-off from 1 s again.
          attempt = 0;
          sink.reset();
          sink.write(linesText(frame.lines));
          return;
        case 'log':
          sink.write(linesText(frame.lines));
          return;
        case 'skipped':
          sink.write(skippedText(frame.lines));
          return;
        case 'status':
          sink.status(frame.status);
          sink.write(statusText(frame.status));
          return;
        case 'notice':
          sink.notice(frame);
          return;
        case 'error':
          sink.error(frame.message);
          return;
      }
    };
    current.onclose = (event) => {
      if (socket !== current) return;
      socket = null;
      const reason = closeReason(event.code);
      if (reason !== null) {
        const message = CLOSE_MESSAGES[reason];
        sink.write(dimLine(`[console] ${message}`));
        sink.connection({ state: 'closed', reason, message });
        return;
      }
      const delay = backoffDelay(attempt);
      sink.connection({ state: 'waiting', retryAt: deps.now() + delay, attempt });
      attempt += 1;
      timer = deps.setTimeout(connect, delay);
    };
    // An error is always followed by a close, which decides what happens next.
    current.onerror = () => undefined;
  };

  const detach = () => {
    const old = socket;
    socket = null;
    if (old === null) return;
    old.onopen = null;
    old.onmessage = null;
    old.onclose = null;
    old.onerror = null;
    old.close(1000);
  };

  connect();

  return {
    send(command) {
      if (socket?.readyState !== OPEN) return false;
      socket.send(JSON.stringify({ type: 'command', command }));
      return true;
    },
    reconnect() {
      attempt = 0;
      connect();
    },
    dispose() {
      disposed = true;
      if (timer !== null) deps.clearTimeout(timer);
      timer = null;
      detach();
    },
  };
}
