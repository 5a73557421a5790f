/**
 * `service install` and `service uninstall`: the panel as a systemd service. Install writes the
 * unit (src/cli/systemd-unit.ts) and enables it without starting it; uninstall disables, stops
 * and removes it. Neither touches a game server: they keep running across both.
 *
 * Where systemctl cannot do its part (systemd is not running, no user session), the unit is
 * still written or removed, and the person is told which commands to run by hand: exit status 0
 * with a warning, since what only this command could do is done.
 */
import { lstatSync, mkdirSync, statSync, unlinkSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { PANEL_ROOT } from '../paths.js';
import { readFlags } from './args.js';
import { UsageError, type CliCommand, type CliIo } from './command.js';
import { configFileTarget } from '../config-file.js';
import { errorCode, writeFileAtomically } from './config-file.js';
import { runProgram } from './system.js';
import {
  UNIT_NAME,
  UnitPathError,
  renderUnit,
  unitDirectory,
  wantedBy,
  type UnitScope,
} from './systemd-unit.js';

const USAGE = `Usage: game-panel service install
       game-panel service uninstall

install    writes a systemd unit running the panel (restarted on failure, with the configuration
           file of setup), then runs systemctl daemon-reload and systemctl enable; it does not
           start it. As root: a system unit, /etc/systemd/system/${UNIT_NAME}, running as
           root (which gives each game server a uid of its own). As a plain user: a user unit
           in ~/.config/systemd/user/ (see loginctl enable-linger).
uninstall  disables, stops and removes the unit.

Stopping or restarting the service stops the panel only: game servers keep running, and the
panel takes them back when it starts again (KillMode=process; docs/deploy.md).

Exit status: 0 done (a warning says what to run by hand when systemctl could not), 1 failed,
2 used wrongly.`;

export const serviceCommand: CliCommand = {
  name: 'service',
  summary: 'install or uninstall the systemd service that runs the panel',
  usage: USAGE,
  run,
};

function run(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = readFlags(args, {}, 1);
  const action = positionals[0];
  const uid = process.getuid?.() ?? -1;
  const scope: UnitScope = uid === 0 ? 'system' : 'user';
  const place: Place = {
    scope,
    dir: unitDirectory(scope, io.env),
    // For tests only: a stand-in for systemctl, so that they never touch the host's systemd.
    systemctl: nonEmpty(io.env.SYSTEMCTL) ?? 'systemctl',
  };
  switch (action) {
    case 'install':
      return Promise.resolve(install(io, place, configFileTarget(io.env, uid === 0)));
    case 'uninstall':
      return Promise.resolve(uninstall(io, place));
    case undefined:
      throw new UsageError('Say what to do: service install, or service uninstall.');
    default:
      throw new UsageError(`Unknown action: service ${action}`);
  }
}

interface Place {
  readonly scope: UnitScope;
  /** The folder the unit file goes in. */
  readonly dir: string;
  /** The program run as systemctl. */
  readonly systemctl: string;
}

function install(io: CliIo, place: Place, configFile: string): number {
  if (!isFile(configFile)) {
    io.err(
      `No configuration file at ${configFile}: run setup first (npm run cli -- setup), or name ` +
        'the file with PANEL_CONFIG. Nothing was written.\n',
    );
    return 1;
  }
  if ((statSync(configFile).mode & 0o077) !== 0) {
    io.err(
      `Warning: ${configFile} is readable by others, and it holds the panel's secret: ` +
        `chmod 600 ${configFile}\n`,
    );
  }
  let text: string;
  try {
    text = renderUnit({
      scope: place.scope,
      checkout: PANEL_ROOT,
      node: process.execPath,
      configFile,
    });
  } catch (error) {
    if (!(error instanceof UnitPathError)) throw error;
    io.err(`${error.message}. Nothing was written.\n`);
    return 1;
  }
  const unitFile = path.join(place.dir, UNIT_NAME);
  const replaced = isFile(unitFile);
  try {
    mkdirSync(place.dir, { recursive: true, mode: 0o755 });
    writeFileAtomically(unitFile, text, true, 0o644);
  } catch (error) {
    io.err(`Cannot write ${unitFile} (${errorCode(error)}). Nothing was installed.\n`);
    return 1;
  }
  io.out(
    `${replaced ? 'Rewrote' : 'Wrote'} ${unitFile}: the panel from ${PANEL_ROOT}, ` +
      `${place.scope === 'system' ? 'as root, ' : ''}with the configuration ${configFile}.\n`,
  );

  const user = place.scope === 'user' ? ['--user'] : [];
  const failed = systemctlSteps(place, [
    [...user, 'daemon-reload'],
    [...user, 'enable', UNIT_NAME],
  ]);
  const start = `systemctl ${user.map((flag) => `${flag} `).join('')}start game-panel`;
  const log = `journalctl ${user.map((flag) => `${flag} `).join('')}-u game-panel -f`;
  if (failed === null) {
    io.out('Enabled: it starts at boot. It is not started yet.\n');
  } else {
    io.err(
      `Warning: the unit is written, but systemctl could not ${failed.step} (${failed.problem}).\n` +
        'Run by hand, once systemd runs:\n' +
        `  systemctl ${[...user, 'daemon-reload'].join(' ')}\n` +
        `  systemctl ${[...user, 'enable', 'game-panel'].join(' ')}\n`,
    );
  }
  io.out(
    [
      `Start it:    ${start}`,
      `Its log:     ${log}`,
      'Stopping or restarting it leaves the game servers running; the panel takes them back.',
      ...(place.scope === 'user'
        ? [
            'A user unit runs only while you are logged in, unless lingering is on for you:',
            `  sudo loginctl enable-linger ${userInfo().username}`,
          ]
        : []),
      '',
    ].join('\n'),
  );
  return 0;
}

function uninstall(io: CliIo, place: Place): number {
  const unitFile = path.join(place.dir, UNIT_NAME);
  if (!isFile(unitFile)) {
    io.out(`No unit at ${unitFile}: nothing to remove.\n`);
    return 0;
  }
  const user = place.scope === 'user' ? ['--user'] : [];
  const stopped = systemctlSteps(place, [[...user, 'disable', '--now', UNIT_NAME]]);
  const link = path.join(place.dir, `${wantedBy(place.scope)}.wants`, UNIT_NAME);
  try {
    unlinkSync(unitFile);
    // What `systemctl disable` removes, removed here too when it could not run.
    if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink() === true) unlinkSync(link);
  } catch (error) {
    io.err(`Cannot remove ${unitFile} (${errorCode(error)}).\n`);
    return 1;
  }
  const reloaded = systemctlSteps(place, [[...user, 'daemon-reload']]);
  io.out(`Removed ${unitFile}. Game servers keep running; npm start takes them back.\n`);
  const failed = stopped ?? reloaded;
  if (failed !== null) {
    io.err(
      `Warning: systemctl could not ${failed.step} (${failed.problem}).\n` +
        'If systemd runs the panel, run by hand:\n' +
        `  systemctl ${[...user, 'stop', 'game-panel'].join(' ')}\n` +
        `  systemctl ${[...user, 'daemon-reload'].join(' ')}\n`,
    );
  }
  return 0;
}

/** Runs systemctl once per step, stopping at the first failure, which is answered. */
function systemctlSteps(
  place: Place,
  steps: readonly (readonly string[])[],
): { step: string; problem: string } | null {
  for (const step of steps) {
    const result = runProgram(place.systemctl, step);
    if (!result.ok) {
      return { step: step.filter((word) => word !== '--user').join(' '), problem: result.problem };
    }
  }
  return null;
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === '' ? undefined : trimmed;
}

function isFile(file: string): boolean {
  return statSync(file, { throwIfNoEntry: false })?.isFile() === true;
}
