/**
 * The SFTP v3 words a session answers with (draft-ietf-secsh-filexfer-02): status codes, open
 * flags, attributes and `ls -l` lines, and how the panel's refusals (AppError codes) become
 * status codes. Only the eight codes of v3 are used, since every client knows those; what the
 * code cannot say (a full quota, an existing entry) is in the message.
 */
import type { Attributes } from 'ssh2';
import { isReserved, userPath } from '../../domain/paths.js';
import { AppError, type ErrorCode } from '../../errors.js';
import type { AttributeChanges, ChannelFlags, EntryStat } from '../../host/host.js';

export const STATUS = {
  OK: 0,
  EOF: 1,
  NO_SUCH_FILE: 2,
  PERMISSION_DENIED: 3,
  FAILURE: 4,
  BAD_MESSAGE: 5,
  OP_UNSUPPORTED: 8,
} as const;

export type StatusCode = (typeof STATUS)[keyof typeof STATUS];

const OPEN = { READ: 0x01, WRITE: 0x02, APPEND: 0x04, CREAT: 0x08, TRUNC: 0x10, EXCL: 0x20 };

/** A request refused: the status code and the message the client is shown. */
export class Refusal extends Error {
  constructor(
    readonly status: StatusCode,
    message: string,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

export const badHandle = (): Refusal => new Refusal(STATUS.FAILURE, 'invalid handle');

const DENIED: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'FORBIDDEN',
  'PATH_OUTSIDE',
  'FILE_DENIED',
  'MODE_REFUSED',
  'BANNED',
  'UNAUTHORIZED',
]);

/**
 * What the client hears of a failure, or null for one it must not hear about (not an AppError,
 * or a 5xx one other than a full disk): the caller logs it and answers "internal error".
 */
export function refusalOf(error: unknown): Refusal | null {
  if (error instanceof Refusal) return error;
  if (!(error instanceof AppError)) return null;
  switch (error.code) {
    case 'NOT_FOUND':
      return new Refusal(STATUS.NO_SUCH_FILE, error.message);
    case 'QUOTA_EXCEEDED':
      return new Refusal(STATUS.FAILURE, 'disk quota exceeded');
    case 'ALREADY_EXISTS':
      return new Refusal(STATUS.FAILURE, 'already exists');
    case 'INSUFFICIENT_STORAGE':
      return new Refusal(STATUS.FAILURE, 'no space left on the disk');
    default:
      if (DENIED.has(error.code)) return new Refusal(STATUS.PERMISSION_DENIED, error.message);
      if (error.statusCode >= 500) return null;
      return new Refusal(STATUS.FAILURE, error.message);
  }
}

/**
 * An SFTP path as segments from the server's root, the session's `/` (its working folder too,
 * so a relative path starts there): the file manager's rule (`userPath`), with the panel's
 * reserved names refused as a permission, not as a malformed path.
 */
export function sessionPath(input: string): string[] {
  if (input.replaceAll('\\', '/').split('/').some(isReserved)) {
    throw new Refusal(STATUS.PERMISSION_DENIED, 'names starting with ".panel-tmp-" are reserved');
  }
  return userPath(input);
}

/** Segments as the absolute SFTP path a client is shown. */
export const shownPath = (segments: readonly string[]): string => `/${segments.join('/')}`;

/** SSH_FXF_* open flags as a channel's; neither READ nor WRITE reads, as OpenSSH does. */
export function channelFlags(pflags: number): ChannelFlags {
  const write = (pflags & OPEN.WRITE) !== 0;
  return {
    read: (pflags & OPEN.READ) !== 0 || !write,
    write,
    append: (pflags & OPEN.APPEND) !== 0,
    create: (pflags & OPEN.CREAT) !== 0,
    truncate: (pflags & OPEN.TRUNC) !== 0,
    exclusive: (pflags & OPEN.EXCL) !== 0,
  };
}

const S_IFMT = 0o170000;
const TYPE_BITS: Record<EntryStat['type'], number> = {
  file: 0o100000,
  folder: 0o040000,
  symlink: 0o120000,
  other: 0,
};

/**
 * The attributes sent for an entry. Owner and group are always 0: the host's numbers for the
 * server's user mean nothing to the client and are not the client's to know.
 */
export function attributesOf(stat: EntryStat): Attributes {
  return {
    size: stat.size,
    uid: 0,
    gid: 0,
    mode: TYPE_BITS[stat.type] | (stat.mode & 0o7777),
    atime: Math.floor(stat.accessed.getTime() / 1000),
    mtime: Math.floor(stat.modified.getTime() / 1000),
  };
}

/** What a client's SETSTAT or FSETSTAT asks for; absent fields of ssh2's parse are undefined. */
export interface ClientAttributes {
  readonly size?: number | undefined;
  readonly uid?: number | undefined;
  readonly gid?: number | undefined;
  readonly mode?: number | undefined;
  readonly atime?: number | undefined;
  readonly mtime?: number | undefined;
}

/**
 * The changes a client's attributes ask for. Owner and group cannot change: asking for the ones
 * shown (0) changes nothing, any other is refused before anything is changed.
 */
export function changesOf(attrs: ClientAttributes): AttributeChanges {
  if (
    (attrs.uid !== undefined && attrs.uid !== 0) ||
    (attrs.gid !== undefined && attrs.gid !== 0)
  ) {
    throw new Refusal(STATUS.PERMISSION_DENIED, 'the owner of a file cannot be changed');
  }
  const changes: { -readonly [K in keyof AttributeChanges]: AttributeChanges[K] } = {};
  // Some clients send the type bits along; only the permission bits are the request.
  if (attrs.mode !== undefined) changes.mode = attrs.mode & ~S_IFMT;
  if (attrs.size !== undefined) changes.size = attrs.size;
  if (attrs.atime !== undefined && attrs.mtime !== undefined) {
    changes.accessed = new Date(attrs.atime * 1000);
    changes.modified = new Date(attrs.mtime * 1000);
  }
  return changes;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const SIX_MONTHS_MS = 182 * 24 * 3600 * 1000;

/** `-rw-r--r--`: the type and permission letters `ls -l` shows. */
function modeString(stat: EntryStat): string {
  const type = { file: '-', folder: 'd', symlink: 'l', other: '?' }[stat.type];
  const m = stat.mode;
  const bit = (mask: number, letter: string): string => ((m & mask) !== 0 ? letter : '-');
  const exec = (mask: number, special: number, set: string, unset: string): string => {
    if ((m & special) === 0) return bit(mask, 'x');
    return (m & mask) !== 0 ? set : unset;
  };
  return (
    type +
    bit(0o400, 'r') +
    bit(0o200, 'w') +
    exec(0o100, 0o4000, 's', 'S') +
    bit(0o040, 'r') +
    bit(0o020, 'w') +
    exec(0o010, 0o2000, 's', 'S') +
    bit(0o004, 'r') +
    bit(0o002, 'w') +
    exec(0o001, 0o1000, 't', 'T')
  );
}

/**
 * The line OpenSSH's sftp-server writes for an entry (its `ls_file`), which OpenSSH's `sftp`
 * prints for `ls -l`: mode, links, owner, group, size, date (time this half-year, else year).
 */
export function longnameOf(name: string, stat: EntryStat, owner: string, now: number): string {
  const when = stat.modified;
  const day = `${MONTHS[when.getMonth()] ?? '???'} ${String(when.getDate()).padStart(2)}`;
  const recent = Math.abs(now - when.getTime()) < SIX_MONTHS_MS;
  const time = recent
    ? `${String(when.getHours()).padStart(2, '0')}:${String(when.getMinutes()).padStart(2, '0')}`
    : ` ${when.getFullYear()}`;
  const links = stat.type === 'folder' ? 2 : 1;
  return [
    `${modeString(stat)}  `,
    String(links).padStart(3),
    ` ${owner.padEnd(8)} ${owner.padEnd(8)} `,
    String(stat.size).padStart(8),
    ` ${day} ${time} ${name}`,
  ].join('');
}
