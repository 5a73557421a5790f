/**
 * The systemd unit that runs the panel as a service: its text, and where it goes. A system unit
 * (running as root, who gives each game server a uid of its own) or, for a plain user, a user
 * unit. Stopping it stops the panel alone, never the game servers (see KILL_MODE below).
 */
import { homedir } from 'node:os';
import path from 'node:path';

export const UNIT_NAME = 'game-panel.service';

export type UnitScope = 'system' | 'user';

export interface UnitSpec {
  readonly scope: UnitScope;
  /** The checkout: the working directory, holding scripts/ and dist/panel.mjs. */
  readonly checkout: string;
  /** Absolute path of the node program to run the panel with. */
  readonly node: string;
  /** The configuration file, handed to the panel as PANEL_CONFIG. */
  readonly configFile: string;
}

/** A path the unit cannot hold as it is (spaces, quotes, `%` or `$` would need escaping). */
export class UnitPathError extends Error {
  constructor(readonly what: string) {
    super(
      `${what} holds characters a systemd unit would read differently (only letters, digits ` +
        `and . _ / + @ : , = ~ - are written as they are): move it, or write the unit by hand`,
    );
    this.name = 'UnitPathError';
  }
}

/**
 * Where the unit goes: `SYSTEMD_UNIT_DIR` when set (for tests only: it lets them write the unit
 * into a folder of their own); else /etc/systemd/system, or the user's
 * `$XDG_CONFIG_HOME/systemd/user` (by default ~/.config/systemd/user).
 */
export function unitDirectory(
  scope: UnitScope,
  env: Readonly<Record<string, string | undefined>>,
): string {
  const forTests = env.SYSTEMD_UNIT_DIR?.trim();
  if (forTests !== undefined && forTests !== '') return path.resolve(forTests);
  if (scope === 'system') return '/etc/systemd/system';
  const config = env.XDG_CONFIG_HOME?.trim();
  const base = config !== undefined && config !== '' ? config : path.join(homedir(), '.config');
  return path.join(base, 'systemd', 'user');
}

/** The target whose `.wants` folder `systemctl enable` links the unit into. */
export function wantedBy(scope: UnitScope): string {
  return scope === 'system' ? 'multi-user.target' : 'default.target';
}

const SYSTEM_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

export function renderUnit(spec: UnitSpec): string {
  const checkout = word(spec.checkout, `The checkout ${spec.checkout}`);
  const node = word(spec.node, `Node's path ${spec.node}`);
  const config = word(spec.configFile, `The configuration file ${spec.configFile}`);
  // The panel looks for bubblewrap on its PATH; node's own folder comes first so that the build
  // step finds the same node that runs the panel (one installed with nvm, say).
  const searchPath = [...new Set([path.dirname(node), ...SYSTEM_PATH])].join(':');
  const system = spec.scope === 'system';
  return [
    '# Written by `game-panel service install`, which rewrites it; `game-panel service uninstall`',
    '# removes it. Change settings in the configuration file (PANEL_CONFIG below), and anything',
    '# else with a drop-in (systemctl edit game-panel), which survives a new install.',
    '[Unit]',
    'Description=Game panel: game servers, their consoles and files, users',
    `Documentation=file://${checkout}/docs/deploy.md`,
    ...(system
      ? [
          'After=network-online.target docker.service postgresql.service',
          'Wants=network-online.target',
        ]
      : []),
    '',
    '[Service]',
    'Type=simple',
    // A root panel gives each game server a uid of its own, which only root can do.
    ...(system ? ['User=root'] : []),
    `WorkingDirectory=${checkout}`,
    `Environment=PANEL_CONFIG=${config}`,
    `Environment=PATH=${searchPath}`,
    '# Builds what changed since the last build, as `npm start` does: nothing on most starts, the',
    '# new version after an upgrade (git pull, then systemctl restart game-panel).',
    `ExecStartPre=${node} scripts/build-if-needed.mjs`,
    `ExecStart=${node} ${checkout}/dist/panel.mjs`,
    'TimeoutStartSec=15min',
    'Restart=on-failure',
    'RestartSec=5s',
    ...KILL_MODE,
    // The panel closes its listeners and lets go of the servers' consoles on SIGTERM in a few
    // seconds; past this, only its own process is killed (KillMode=process).
    'TimeoutStopSec=30s',
    '# Game servers inherit this limit: many players, many open files and sockets.',
    'LimitNOFILE=65536',
    '',
    '[Install]',
    `WantedBy=${wantedBy(spec.scope)}`,
    '',
  ].join('\n');
}

/**
 * Stopping, restarting or upgrading the panel must never take the game servers with it. They
 * run under small holder processes the panel starts detached, which systemd still counts in this
 * unit's control group; its default, KillMode=control-group, would signal every one of them.
 */
const KILL_MODE = [
  '# Stopping or restarting the panel must not stop the game servers. Each runs under a small',
  '# holder process that the panel starts detached (or in a Docker container); the holders stay',
  "# in this unit's control group, and systemd's default KillMode=control-group would signal",
  "# them all. KillMode=process sends SIGTERM (and, past TimeoutStopSec, SIGKILL) to the panel's",
  '# own process only: the games keep running, and the next start takes them back. To stop the',
  '# games as well: game-panel shutdown --stop-servers.',
  'KillMode=process',
];

/** A path written into the unit as it is; anything systemd would unquote or expand is refused. */
function word(value: string, what: string): string {
  if (!path.isAbsolute(value) || !/^[\w./+@:,=~-]+$/.test(value)) throw new UnitPathError(what);
  return value;
}
