/**
 * What the storage's failures say to the client: a file-system error turned into an AppError
 * that names only the user's own path (segments inside the server directory), never the host's;
 * anything unexpected is left as it is, a 500 logged and never shown.
 */
import { AppError, notFound } from '../../../errors.js';
import { changed, errnoOf, shown } from '../tree.js';

export const binary = (): AppError =>
  new AppError('BINARY_FILE', 'The file is not UTF-8 text; download it instead');
export const special = (segments: readonly string[]): AppError =>
  new AppError(
    'SPECIAL_FILE',
    `${shown(segments)} is not a regular file (a FIFO, socket or device)`,
  );
export const alreadyExists = (segments: readonly string[]): AppError =>
  new AppError('ALREADY_EXISTS', `${shown(segments)} already exists`);

/** Turns a file-system error into what the client should hear, naming only the user's path. */
export function fsError(error: unknown, segments: readonly string[]): Error {
  if (error instanceof AppError) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return notFound(shown(segments));
    case 'EEXIST':
      return alreadyExists(segments);
    case 'ENOTDIR':
      return new AppError('NOT_A_FOLDER', `A part of ${shown(segments)} is not a folder`);
    case 'EISDIR':
      return new AppError('NOT_A_FILE', `${shown(segments)} is a folder`);
    case 'ELOOP':
      // O_NOFOLLOW met a symlink where a file or folder was just seen: it changed under us.
      return changed(segments);
    case 'ENAMETOOLONG':
      return new AppError('INVALID_PATH', 'That path or name is too long');
    case 'ENOTEMPTY':
      return alreadyExists(segments);
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new AppError('FORBIDDEN', `The panel may not change ${shown(segments)}`);
    case 'ENOSPC':
    case 'EDQUOT':
      return new AppError('INSUFFICIENT_STORAGE', 'The disk is full');
    case 'EFBIG':
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        `${shown(segments)} would be larger than the disk allows`,
      );
    case 'ENXIO':
      return special(segments);
    default:
      // Unexpected: a 500, logged with its details and never shown to the client.
      return error instanceof Error ? error : new Error(String(error));
  }
}

/** A bulk operation that failed part-way: the error, saying what was done before it. */
export function partly(error: unknown, verb: string, done: readonly string[]): unknown {
  if (!(error instanceof AppError) || done.length === 0) return error;
  const list = done.map((item) => `"/${item}"`).join(', ');
  return new AppError(error.code, `${error.message} (already ${verb}: ${list})`);
}
