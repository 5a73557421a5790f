/**
 * The sandbox a local game server runs in, as arguments: where bubblewrap and setpriv are (and
 * whether this machine's bubblewrap can make an unprivileged sandbox), the view of the file
 * system a sandboxed server gets ({@link sandboxView}), and the argv that wraps a server's
 * command in it ({@link sandboxArgv}): new user, PID, IPC and UTS namespaces (and network, with
 * SERVER_NETWORK=none), no user namespace inside, the server's folder the only one it may write;
 * without bubblewrap, `no_new_privs` through setpriv where it is. Also the whole environment a
 * server gets. Only builds and probes: ./process-runtime.ts runs what it builds.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import type { ServerNetwork } from '../../../config.js';
import { INSTALL_SCRIPT_DIR, INSTALL_SERVER_DIR, type LaunchSpec } from '../runtime.js';
import type { ServerUser } from '../server-user.js';

/** The whole environment a server process gets (and HOME, its own folder). */
export const SERVER_ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games',
  LANG: 'C.UTF-8',
} as const;

/**
 * What of the host's /etc a sandboxed server sees: what programs need to load libraries, resolve
 * names, speak TLS and know the time and users; nothing that holds a secret. Entries whose name
 * starts with one of {@link ETC_PREFIXES} come too (Java's and Python's own configuration).
 */
const ETC_ENTRIES = [
  'alternatives',
  'ca-certificates',
  'ca-certificates.conf',
  'fonts',
  'gai.conf',
  'group',
  'host.conf',
  'hostname',
  'hosts',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'localtime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
  'timezone',
];
const ETC_PREFIXES = ['java', 'python3', 'mono', 'dotnet'];
/** Top-level folders that merged-/usr systems make symlinks into /usr, others real folders. */
const ROOT_LINKS = ['bin', 'sbin', 'lib', 'lib32', 'lib64', 'libx32'];

/** Finds an executable called `name` in the absolute folders of `searchPath`. */
export function findProgram(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(':')) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  return null;
}

/**
 * Where the server's program is: a path (relative to the server's folder) or a name looked up
 * on the servers' PATH; `null` when there is no executable file there.
 */
export function findCommand(command: string, cwd: string): string | null {
  if (!command.includes('/')) return findProgram(command, SERVER_ENV.PATH);
  const file = path.resolve(cwd, command);
  try {
    accessSync(file, constants.X_OK);
    return file;
  } catch {
    return null;
  }
}

/**
 * The absolute path of a bubblewrap that can make an unprivileged sandbox on this machine, as
 * `user` (the panel's own user when `null`); `null` when there is none or it cannot run.
 */
export function findBubblewrap(searchPath: string, user: ServerUser | null = null): string | null {
  const candidate = findProgram('bwrap', searchPath);
  if (candidate === null) return null;
  const probe = spawnSync(
    candidate,
    [
      '--unshare-user',
      '--unshare-pid',
      '--ro-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      '--die-with-parent',
      '--',
      'true',
    ],
    { stdio: 'ignore', timeout: 10_000, env: SERVER_ENV, ...identity(user) },
  );
  return probe.status === 0 ? candidate : null;
}

export const identity = (user: { readonly uid: number; readonly gid: number } | null) =>
  user ? { uid: user.uid, gid: user.gid } : {};

/**
 * The sandbox's view of the file system, as bubblewrap arguments: /usr and the system's library
 * and program folders read-only, a chosen part of /etc, /sys read-only, a private /dev, /proc
 * (of its own PID namespace), /tmp and /var/tmp, the operator's extra read-only paths, and the
 * server's own folder read-write. Not there: the panel's data directory and configuration, /home,
 * /root, /run and /var (so no host socket: databases, Docker, D-Bus), /srv, /opt, /mnt.
 */
export function sandboxView(readOnlyPaths: readonly string[]): string[] {
  const args = ['--ro-bind', '/usr', '/usr'];
  for (const name of ROOT_LINKS) {
    const target = `/${name}`;
    const stat = lstatSync(target, { throwIfNoEntry: false });
    if (stat?.isSymbolicLink()) args.push('--symlink', readlinkSync(target), target);
    else if (stat?.isDirectory()) args.push('--ro-bind', target, target);
  }
  const etc = readdirSync('/etc').filter(
    (entry) =>
      ETC_ENTRIES.includes(entry) || ETC_PREFIXES.some((prefix) => entry.startsWith(prefix)),
  );
  for (const entry of etc.sort()) args.push('--ro-bind-try', `/etc/${entry}`, `/etc/${entry}`);
  args.push('--ro-bind-try', '/sys', '/sys');
  args.push('--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/var/tmp');
  // Last, so that an extra path under /tmp or /var/tmp is not hidden by the private ones.
  for (const extra of readOnlyPaths) args.push('--ro-bind-try', extra, extra);
  return args;
}

/** Where bubblewrap and setpriv are, and what a sandboxed server sees. */
export interface Sandbox {
  /** bubblewrap, or null: servers run without a sandbox. */
  readonly bwrap: string | null;
  /** setpriv, used without bubblewrap; null: there is none. */
  readonly setpriv: string | null;
  /** The view of the file system ({@link sandboxView}); empty without bubblewrap. */
  readonly view: readonly string[];
  readonly network: ServerNetwork;
}

/**
 * The argv that runs `spec`'s command in the sandbox. `scriptDir`: the folder that holds an
 * install's script, shown at INSTALL_SCRIPT_DIR (the server's folder then at INSTALL_SERVER_DIR).
 */
export function sandboxArgv(
  sandbox: Sandbox,
  spec: LaunchSpec,
  scriptDir: string | null,
): string[] {
  const { bwrap, setpriv, view, network } = sandbox;
  if (bwrap === null) {
    return setpriv !== null ? [setpriv, '--no-new-privs', '--', ...spec.argv] : [...spec.argv];
  }
  const install =
    scriptDir === null
      ? []
      : ['--bind', spec.cwd, INSTALL_SERVER_DIR, '--ro-bind', scriptDir, INSTALL_SCRIPT_DIR];
  return [
    bwrap,
    '--unshare-user',
    // No user namespace inside: less of the kernel within reach of a hostile server.
    '--disable-userns',
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(network === 'none' ? ['--unshare-net'] : []),
    '--die-with-parent',
    '--new-session',
    ...view,
    '--bind',
    spec.cwd,
    spec.cwd,
    ...install,
    // The sandbox's own root folder, where bubblewrap made the mount points, is read-only too.
    '--remount-ro',
    '/',
    '--chdir',
    scriptDir === null ? spec.cwd : INSTALL_SERVER_DIR,
    '--',
    ...spec.argv,
  ];
}
