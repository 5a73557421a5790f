/**
 * Who game servers run as. Only root can run a process as another user, so:
 * - a panel running as root runs each server as a uid and gid of its own, never 0: the first of
 *   `SERVER_UID_RANGE` plus the server's id (ids are never reused, see migration 0018), with no
 *   /etc/passwd entry needed; its folder belongs to that uid with mode 0700, so no other server
 *   reads it (docs/security.md);
 * - a panel running as any other user runs servers as itself, and `SERVER_USER` may not ask for
 *   anyone else.
 */
import { userInfo } from 'node:os';
import { ConfigError } from '../../config.js';
import { AppError } from '../../errors.js';

export interface ServerUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

export interface UidRange {
  readonly first: number;
  readonly last: number;
}

/**
 * Whether servers get users of their own (the panel runs as root), or `null` when servers run
 * as the panel's own user. Throws {@link ConfigError} for a `SERVER_USER` that cannot be.
 */
export function resolveServerUsers(requested: string | null, range: UidRange): UidRange | null {
  const panelUid = process.getuid?.() ?? -1;
  if (panelUid !== 0) {
    if (requested !== null && requested !== userInfo().username && requested !== String(panelUid))
      throw new ConfigError(
        'SERVER_USER',
        'only a panel running as root can run servers as another user; unset it',
      );
    return null;
  }
  if (requested !== null) {
    const root = /^(root|0)(:\d+)?$|^\d+:0$/.test(requested);
    throw new ConfigError(
      'SERVER_USER',
      root
        ? `${requested} is root (uid or gid 0): servers never run as root`
        : 'a panel running as root runs each server as a uid of its own from SERVER_UID_RANGE; unset SERVER_USER',
    );
  }
  return range;
}

/** The user of the server whose id is `id`, from `range`; 409 when the range is used up. */
export function serverUserOf(range: UidRange, id: number): ServerUser {
  const uid = range.first + id;
  if (!Number.isSafeInteger(id) || id < 1 || uid > range.last) {
    throw new AppError(
      'CONFLICT',
      `Server id ${id} has no uid left in SERVER_UID_RANGE (${range.first}-${range.last}): widen it`,
    );
  }
  return { name: `server-${id}`, uid, gid: uid };
}

/** A user of the range that is no server's (id 0), for probes: what any server's user can do. */
export const probeUserOf = (range: UidRange): ServerUser => ({
  name: `uid ${range.first}`,
  uid: range.first,
  gid: range.first,
});
