/**
 * The one error type that services throw. Its `code` is a closed union: a client may switch on it,
 * so a code, once shipped, keeps its meaning. The HTTP layer turns it into the body of
 * docs/api.md, contract §2: `{ message, code, statusCode }`.
 */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'INVALID_JSON'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNKNOWN_SERVER'
  | 'INVALID_PATH'
  | 'INVALID_UPLOAD'
  | 'INVALID_ARCHIVE'
  | 'INVALID_REDIRECT'
  | 'NOT_A_FOLDER'
  | 'NOT_A_FILE'
  | 'SPECIAL_FILE'
  | 'BINARY_FILE'
  | 'SYMLINK_LOOP'
  | 'PATH_OUTSIDE'
  | 'FILE_DENIED'
  | 'ALREADY_EXISTS'
  | 'FOLDER_NOT_EMPTY'
  | 'MODE_REFUSED'
  | 'CHANGED_CONCURRENTLY'
  | 'RANGE_NOT_SATISFIABLE'
  | 'INSUFFICIENT_STORAGE'
  | 'UNAUTHORIZED'
  | 'INVALID_CREDENTIALS'
  | 'FORBIDDEN'
  | 'OWNER_PROTECTED'
  | 'BANNED'
  | 'WRONG_PASSWORD'
  | 'REGISTRATION_CLOSED'
  | 'NOT_FOUND'
  | 'LINK_EXPIRED'
  | 'INVALID_LINK'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'USERNAME_TAKEN'
  | 'LAST_ADMIN'
  | 'TWO_FACTOR_OFF'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'UPGRADE_REQUIRED'
  | 'INTERNAL'
  | 'PROVIDER_UNAVAILABLE'
  | 'QUOTA_EXCEEDED'
  | 'OVER_QUOTA'
  | 'LIMITS_UNAVAILABLE'
  | 'START_REFUSED'
  | 'RUNTIME_UNAVAILABLE'
  | 'NOT_INSTALLED'
  | 'PORT_IN_USE'
  | 'ALLOCATION_TAKEN'
  | 'BACKUP_LIMIT'
  | 'BACKUP_LOCKED'
  | 'BACKUP_IN_PROGRESS'
  | 'TWO_FACTOR_REQUIRED'
  | 'SESSION_REQUIRED'
  | 'SIGN_IN_AGAIN'
  | 'URL_NOT_ALLOWED'
  | 'IMAGE_NOT_ALLOWED'
  | 'NODE_UNREACHABLE'
  | 'NODE_HAS_SERVERS'
  | 'NODE_MAINTENANCE'
  | 'NODE_FULL'
  | 'TRANSFER_IN_PROGRESS';

const STATUS: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNKNOWN_SERVER: 400,
  INVALID_PATH: 400,
  INVALID_UPLOAD: 400,
  /** An archive that is damaged, of an unsupported format, or holds a refused entry. */
  INVALID_ARCHIVE: 400,
  INVALID_REDIRECT: 400,
  NOT_A_FOLDER: 400,
  NOT_A_FILE: 400,
  SPECIAL_FILE: 400,
  BINARY_FILE: 400,
  SYMLINK_LOOP: 400,
  PATH_OUTSIDE: 403,
  /** The server's template protects the file (its `file_denylist`); only an admin may touch it. */
  FILE_DENIED: 403,
  ALREADY_EXISTS: 409,
  FOLDER_NOT_EMPTY: 409,
  MODE_REFUSED: 403,
  CHANGED_CONCURRENTLY: 409,
  RANGE_NOT_SATISFIABLE: 416,
  INSUFFICIENT_STORAGE: 507,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAUTHORIZED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  /** A sub-user tried to remove or narrow the server's owner. */
  OWNER_PROTECTED: 403,
  BANNED: 403,
  WRONG_PASSWORD: 403,
  REGISTRATION_CLOSED: 403,
  NOT_FOUND: 404,
  LINK_EXPIRED: 410,
  /** A set-password link that is unknown, used, replaced or expired. */
  INVALID_LINK: 400,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  USERNAME_TAKEN: 409,
  LAST_ADMIN: 409,
  /** Two-factor sign-in was to be turned off, and it is not on. */
  TWO_FACTOR_OFF: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UPGRADE_REQUIRED: 426,
  INTERNAL: 500,
  PROVIDER_UNAVAILABLE: 503,
  /** A write would pass the server's disk quota: nothing was written. */
  QUOTA_EXCEEDED: 413,
  /** The server uses more disk than its quota allows, so it may not start. */
  OVER_QUOTA: 409,
  /** The server has a limit this host cannot enforce (no writable cgroup): it is not started. */
  LIMITS_UNAVAILABLE: 409,
  /** The runtime cannot start the server as configured (a missing image, for one). */
  START_REFUSED: 409,
  /** The runtime cannot be reached (the Docker daemon is down or unreachable). */
  RUNTIME_UNAVAILABLE: 503,
  /** The server's template install has not succeeded (yet): it may not start. */
  NOT_INSTALLED: 409,
  /** Another program holds one of the server's ports: it is not started. */
  PORT_IN_USE: 409,
  /** The address and port is another server's allocation. */
  ALLOCATION_TAKEN: 409,
  /** The server has as many backups, or as many bytes of them, as an admin allowed. */
  BACKUP_LIMIT: 409,
  /** A locked backup is never deleted: unlock it first. */
  BACKUP_LOCKED: 409,
  /** A backup or restore of the server is under way. */
  BACKUP_IN_PROGRESS: 409,
  /** The caller's role must use two-factor sign-in, and they have not set it up yet. */
  TWO_FACTOR_REQUIRED: 403,
  SESSION_REQUIRED: 403,
  /** An account without a password must have signed in a moment ago to do this (an API key). */
  SIGN_IN_AGAIN: 403,
  /**
   * A webhook URL that is not http(s), or that points at the panel's own host, loopback, a
   * private or otherwise non-public address, and is not allowed by WEBHOOK_ALLOWED_HOSTS.
   */
  URL_NOT_ALLOWED: 400,
  /** A server's image comes from a registry the panel does not allow images from. */
  IMAGE_NOT_ALLOWED: 400,
  /**
   * A node's engine refused the panel or did not answer in time, or the stream to a server's
   * file agent there ended or broke (docs/nodes.md): nothing of what was asked is known to have
   * happened; asking again may work.
   */
  NODE_UNREACHABLE: 503,
  /** A node with servers on it is not deleted: they are transferred or deleted first. */
  NODE_HAS_SERVERS: 409,
  /** The node is in maintenance: no server is placed on it and none of its servers starts. */
  NODE_MAINTENANCE: 409,
  /** No node (or not the one named) has the memory left for the server's limit. */
  NODE_FULL: 409,
  /**
   * A transfer of the server to another node is under way (docs/nodes.md, "Transfers"): another
   * transfer waits for its end.
   */
  TRANSFER_IN_PROGRESS: 409,
};

export interface ErrorDetail {
  /** Where the problem is: a JSON pointer into the request part, or a name. */
  readonly path: string;
  readonly message: string;
}

export class AppError extends Error {
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      readonly details?: readonly ErrorDetail[];
      /** Seconds, sent as `Retry-After` (429). */
      readonly retryAfter?: number;
    } = {},
  ) {
    super(message);
    this.name = 'AppError';
    this.statusCode = STATUS[code];
  }
}

/** Whether `value` is one of the codes an AppError may carry. */
export const isErrorCode = (value: unknown): value is ErrorCode =>
  typeof value === 'string' && Object.hasOwn(STATUS, value);

/** The HTTP status of an error code. */
export const statusOf = (code: ErrorCode): number => STATUS[code];

/** 400 VALIDATION_FAILED for one field of the body, `body/<field>`, and what is wrong with it. */
export const invalidField = (field: string, message: string): AppError =>
  new AppError('VALIDATION_FAILED', `${field}: ${message}`, {
    details: [{ path: `body/${field}`, message }],
  });

export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'You are not allowed to do this'): AppError =>
  new AppError('FORBIDDEN', message);

/** A set-password link that is unknown, used, replaced or expired: said for a person to read. */
export const invalidLink = (): AppError =>
  new AppError(
    'INVALID_LINK',
    'This link has expired or was already used: ask an admin for a new one',
  );
