/**
 * Who game servers run as. Only root can run a process as another user, so:
 * - a panel running as root runs every server as `SERVER_USER` (default `game-panel`, made as a
 *   system user with no home and no login shell when missing), never as uid 0;
 * - a panel running as any other user runs servers as itself, and `SERVER_USER` may not ask for
 *   anyone else.
 */
import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { ConfigError } from '../../config.js';

export const DEFAULT_SERVER_USER = 'game-panel';

/** getent and useradd are looked up here, whatever the panel's own PATH. */
const SYSTEM_PATH = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

export interface ServerUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * The user servers run as when the panel switches users (it runs as root), or `null` when
 * servers run as the panel's own user. Throws {@link ConfigError} for a user that cannot be.
 */
export function resolveServerUser(requested: string | null): ServerUser | null {
  const panelUid = process.getuid?.() ?? -1;
  if (panelUid !== 0) {
    if (requested !== null && requested !== userInfo().username && requested !== String(panelUid))
      throw new ConfigError(
        'SERVER_USER',
        'only a panel running as root can run servers as another user; unset it',
      );
    return null;
  }
  const name = requested ?? DEFAULT_SERVER_USER;
  const user = numericUser(name) ?? lookUp(name) ?? create(name);
  if (user.uid === 0 || user.gid === 0)
    throw new ConfigError(
      'SERVER_USER',
      `${name} is root (uid or gid 0): servers never run as root`,
    );
  return user;
}

/** `uid` or `uid:gid`: a user that need not exist in /etc/passwd. */
function numericUser(text: string): ServerUser | null {
  const match = /^(\d+)(?::(\d+))?$/.exec(text);
  if (!match?.[1]) return null;
  const uid = Number(match[1]);
  return { name: text, uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

function lookUp(name: string): ServerUser | null {
  const result = spawnSync('getent', ['passwd', name], {
    encoding: 'utf8',
    timeout: 10_000,
    env: SYSTEM_PATH,
  });
  if (result.status !== 0) return null;
  const [, , uid, gid] = result.stdout.trim().split(':');
  if (uid === undefined || gid === undefined) return null;
  return { name, uid: Number(uid), gid: Number(gid) };
}

function create(name: string): ServerUser {
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name))
    throw new ConfigError('SERVER_USER', `no user ${name}, and that is not a name to create one`);
  const result = spawnSync(
    'useradd',
    [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      '--comment',
      'game servers of the game panel',
      name,
    ],
    { encoding: 'utf8', timeout: 30_000, env: SYSTEM_PATH },
  );
  // Another panel starting at the same moment may have made it first: look again either way.
  const user = lookUp(name);
  if (user) return user;
  const why = result.error?.message ?? result.stderr.trim().split('\n')[0] ?? 'useradd failed';
  throw new ConfigError('SERVER_USER', `no user ${name}, and it could not be created: ${why}`);
}
