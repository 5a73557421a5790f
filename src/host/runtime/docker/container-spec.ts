/**
 * What a server's container is made of, as the options of the engine's create call: the server's
 * folder bind-mounted read-write at CONTAINER_HOME (an install's at INSTALL_SERVER_DIR, its
 * script put in by {@link installScriptArchive}), a read-only root file system (not for an install) and
 * a small private /tmp; no capability, `no-new-privileges`, never root; only the servers'
 * environment (none of the panel's secrets); the memory (no swap), CPU and pids limits; its
 * allocations published on the bridge network, or no network at all. Also the names and labels
 * that tell this panel's containers apart. Pure: ./docker-runtime.ts makes what it describes.
 */
import type Docker from 'dockerode';
import { Header, type HeaderData } from 'tar';
import type { Allocation } from '../../../domain/server.js';
import {
  INSTALL_SCRIPT_DIR,
  INSTALL_SERVER_DIR,
  SERVER_OOM_SCORE_ADJ,
  StartRefusedError,
  type LaunchSpec,
} from '../runtime.js';

/** Where a server's folder is inside its container: its working directory and its HOME. */
export const CONTAINER_HOME = '/home/container';
export const PANEL_LABEL = 'game-panel.panel';
export const SERVER_LABEL = 'game-panel.server';
/** On the container of a server's install script, instead of SERVER_LABEL: never taken over. */
export const INSTALL_LABEL = 'game-panel.install';

/** Where a program named without a path is looked up in an image: the servers' PATH. */
export const PROGRAM_FOLDERS = [
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
  '/usr/games',
];

/** The whole environment a server gets, as with the process runtime. */
const SERVER_ENV = [
  `PATH=${PROGRAM_FOLDERS.join(':')}`,
  'LANG=C.UTF-8',
  `HOME=${CONTAINER_HOME}`,
  `PWD=${CONTAINER_HOME}`,
];
/** What a template may not set: the panel's own part of the environment. */
const RESERVED_ENV = new Set(['PATH', 'LANG', 'HOME', 'PWD', 'HOSTNAME']);

/** The labels of server `name`'s container: this panel's, and the server's. */
export const serverLabels = (panelId: string, name: string) => ({
  [PANEL_LABEL]: panelId,
  [SERVER_LABEL]: name,
});
/** The name of server `name`'s container (its install's has none). */
export const containerName = (panelId: string, name: string) => `game-panel-${panelId}-${name}`;

/**
 * The server's allocations as Docker publishes them: each port over TCP and UDP (games use
 * either), on the allocation's address.
 */
function publishedPorts(allocations: readonly Allocation[]): {
  exposed: Record<string, Record<string, never>>;
  bindings: Record<string, { HostIp: string; HostPort: string }[]>;
} {
  const exposed: Record<string, Record<string, never>> = {};
  const bindings: Record<string, { HostIp: string; HostPort: string }[]> = {};
  for (const { ip, port } of allocations) {
    for (const protocol of ['tcp', 'udp']) {
      const key = `${port}/${protocol}`;
      exposed[key] = {};
      (bindings[key] ??= []).push({ HostIp: ip, HostPort: String(port) });
    }
  }
  return { exposed, bindings };
}

/** The private /tmp: bounded, no set-uid programs, no device files. */
const TMP_OPTIONS = 'rw,nosuid,nodev,size=64m';

/**
 * Who the container runs as: the server's own user (the owner of its folder), else the
 * panel's own user; never root.
 */
export function containerUser(spec: LaunchSpec): string {
  const uid = process.getuid?.() ?? 0;
  const owner = spec.user ?? (uid !== 0 ? { uid, gid: process.getgid?.() ?? uid } : null);
  if (owner === null || owner.uid === 0 || owner.gid === 0)
    throw new StartRefusedError('servers never run as root, and there is no other user');
  return `${owner.uid}:${owner.gid}`;
}

/**
 * The container that runs `spec` (its command, with the shell it needs, already chosen) from
 * `image`, with `folder` (the server's folder as the engine's machine names it: `spec.cwd` on
 * the panel's own, a folder in the server's volume on a node) bind-mounted. Refused
 * (StartRefusedError) when there is no user but root to run it as.
 */
export function containerOptions(
  spec: LaunchSpec,
  image: string,
  panelId: string,
  network: 'bridge' | 'none',
  folder: string,
): Docker.ContainerCreateOptions {
  const [program, ...args] = spec.argv;
  const { memoryBytes, cpuPercent, pids } = spec.limits;
  const install = spec.install;
  // Published on the engine's bridge network; with none, there is nothing to publish to.
  const ports = network === 'bridge' ? publishedPorts(spec.ports) : null;
  return {
    // An install container has no name of its own: it must never be taken for the server.
    ...(install === null ? { name: containerName(panelId, spec.name) } : {}),
    Image: image,
    Entrypoint: [program],
    Cmd: args,
    Env: [
      ...Object.entries(spec.env)
        .filter(([key]) => !RESERVED_ENV.has(key))
        .map(([key, value]) => `${key}=${value}`),
      ...SERVER_ENV,
      ...(install === null ? [] : [`PWD=${INSTALL_SERVER_DIR}`]),
    ],
    WorkingDir: install === null ? CONTAINER_HOME : INSTALL_SERVER_DIR,
    User: containerUser(spec),
    Labels:
      install === null
        ? serverLabels(panelId, spec.name)
        : { [PANEL_LABEL]: panelId, [INSTALL_LABEL]: spec.name },
    ...(ports === null ? {} : { ExposedPorts: ports.exposed }),
    Tty: false,
    OpenStdin: true,
    StdinOnce: false,
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    NetworkDisabled: network === 'none',
    HostConfig: {
      // An install's script is not mounted: it is put into the created container
      // (installScriptArchive), as a node's engine cannot see the panel's disk.
      // A mount, not `Binds`: a folder that is missing is an error of the create, never made
      // by the engine as root's own (on a node, the folder is the files side's to make).
      Mounts: [
        {
          Type: 'bind',
          Source: folder,
          Target: install === null ? CONTAINER_HOME : INSTALL_SERVER_DIR,
          ReadOnly: false,
        },
      ],
      // An install script may put its tools in the container (it is removed afterwards).
      ReadonlyRootfs: install === null,
      Tmpfs: { '/tmp': TMP_OPTIONS },
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      NetworkMode: network,
      PortBindings: ports?.bindings ?? {},
      PublishAllPorts: false,
      RestartPolicy: { Name: 'no' },
      OomScoreAdj: SERVER_OOM_SCORE_ADJ,
      ...(memoryBytes === null ? {} : { Memory: memoryBytes, MemorySwap: memoryBytes }),
      ...(cpuPercent === null ? {} : { NanoCpus: Math.round(cpuPercent * 1e7) }),
      ...(pids === null ? {} : { PidsLimit: pids }),
    },
  };
}

/**
 * An install's script as a tar archive for the engine's archive endpoint (`PUT
 * /containers/{id}/archive`, path `/`), put into the install container after its creation and
 * before its start: INSTALL_SCRIPT_DIR root's own (0755) holding `install.sh` root's own and
 * 0555. The install runs as the server's user, so it can read and run its script but neither
 * change it nor add to its folder: the read-only mount it had on the panel's disk, kept in the
 * container's own layer (docs/nodes.md "Servers on a node"). Eggs written on Windows carry
 * CRLF, which bash reads as part of each command: lines end in LF only.
 */
export function installScriptArchive(script: string): Buffer {
  const body = Buffer.from(script.replace(/\r\n/g, '\n'), 'utf8');
  const folder = INSTALL_SCRIPT_DIR.replace(/^\/+/, '');
  const mtime = new Date();
  const block = (data: HeaderData): Buffer => {
    const header = new Header(data);
    // Plain short ASCII names and a small size: a ustar header holds them (no PAX needed).
    if (header.encode() || !header.block) throw new Error('the install script header needs PAX');
    return header.block;
  };
  const owner = { uid: 0, gid: 0, uname: 'root', gname: 'root', mtime };
  const padding = Buffer.alloc((512 - (body.length % 512)) % 512);
  return Buffer.concat([
    block({ ...owner, path: `${folder}/`, type: 'Directory', mode: 0o755, size: 0 }),
    block({ ...owner, path: `${folder}/install.sh`, type: 'File', mode: 0o555, size: body.length }),
    body,
    padding,
    // The end of the archive: two blocks of zeros.
    Buffer.alloc(1024),
  ]);
}
