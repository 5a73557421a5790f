/**
 * The console socket, protocol v2 (docs/api.md, "Console socket"): what the panel sends, read
 * without trusting it, and what each message means for the terminal.
 */
import type { ServerStatus } from '../components/StatusBadge';

export type Frame =
  | { readonly type: 'history'; readonly lines: readonly string[] }
  | { readonly type: 'log'; readonly lines: readonly string[] }
  | { readonly type: 'status'; readonly status: ServerStatus }
  | { readonly type: 'skipped'; readonly lines: number }
  | Notice
  | { readonly type: 'error'; readonly code: string; readonly message: string };

/**
 * A line of an egg feature's showed up in the server's output (docs/templates.md): `eula` (the
 * game asks for the Minecraft EULA), `java_version`, `pid_limit`, `steam_disk_space`; `message`
 * says what it means, as the console's `[panel] …` line does.
 */
export interface Notice {
  readonly type: 'notice';
  readonly feature: string;
  readonly message: string;
}

const STATUSES: readonly string[] = [
  'stopped',
  'installing',
  'starting',
  'running',
  'stopping',
  'crashed',
  'unknown',
];

const isLines = (value: unknown): value is readonly string[] =>
  Array.isArray(value) && value.every((line) => typeof line === 'string');

/** A frame from the text the socket received; `null` for anything that is not one (never throws). */
export function parseFrame(text: unknown): Frame | null {
  if (typeof text !== 'string') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case 'history':
    case 'log':
      return isLines(frame.lines) ? { type: frame.type, lines: frame.lines } : null;
    case 'status':
      return typeof frame.status === 'string' && STATUSES.includes(frame.status)
        ? { type: 'status', status: frame.status as ServerStatus }
        : null;
    case 'skipped':
      return typeof frame.lines === 'number' && Number.isFinite(frame.lines)
        ? { type: 'skipped', lines: frame.lines }
        : null;
    case 'notice':
      return typeof frame.feature === 'string' && typeof frame.message === 'string'
        ? { type: 'notice', feature: frame.feature, message: frame.message }
        : null;
    case 'error':
      return typeof frame.message === 'string'
        ? {
            type: 'error',
            code: typeof frame.code === 'string' ? frame.code : 'ERROR',
            message: frame.message,
          }
        : null;
    default:
      return null;
  }
}

const DIM = '\x1b[2m';
const NORMAL = '\x1b[22m';

/** A line of the panel's own in the terminal: dim, so it reads apart from the server's output. */
export const dimLine = (text: string): string => `${DIM}${text}${NORMAL}\r\n`;

/** Lines as one write: each ends the line it is on (`\r\n`: the terminal does not translate). */
export const linesText = (lines: readonly string[]): string =>
  lines.length === 0 ? '' : `${lines.join('\r\n')}\r\n`;

export const skippedText = (lines: number): string =>
  dimLine(`… ${lines.toLocaleString('en')} ${lines === 1 ? 'line' : 'lines'} skipped`);

export const statusText = (status: ServerStatus): string => dimLine(`[status] ${status}`);

/** The message for a console link that will not be made again, or `null` to try again. */
export type CloseReason = 'signed-out' | 'access-removed' | 'deleted' | 'fell-behind';

/** Why the panel closed the socket (its close code), or `null` for a network reason: retry. */
export function closeReason(code: number): CloseReason | null {
  switch (code) {
    case 4401:
      return 'signed-out';
    case 4403:
      return 'access-removed';
    case 4404:
      return 'deleted';
    case 4408:
      return 'fell-behind';
    default:
      return null;
  }
}

export const CLOSE_MESSAGES: Readonly<Record<CloseReason, string>> = {
  'signed-out': 'Your session has ended; sign in again',
  'access-removed': 'Your access to this server was removed',
  deleted: 'This server was deleted',
  'fell-behind': 'The console fell behind and was disconnected',
};

/** Wait before the n-th attempt to connect again (0-based): 1 s, 2 s, 4 s… at most 30 s. */
export function backoffDelay(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempt), 30_000);
}

/** The socket's address for a server, on the page's own host (ws: or wss: as the page). */
export function consoleUrl(
  location: Pick<Location, 'protocol' | 'host'>,
  server: string,
  token: string,
): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/ws/servers/${encodeURIComponent(server)}/console?token=${encodeURIComponent(token)}`;
}
