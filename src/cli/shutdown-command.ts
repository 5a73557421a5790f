/**
 * `shutdown [--stop-servers]`: ends the panel that runs on the configured data directory, as
 * SIGTERM would (its game servers run on, and its next start takes them back), or with
 * `--stop-servers` after stopping every game server with its stop sequence (SIGUSR2). Waits for
 * the panel to exit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { loadPanelConfig } from '../config-file.js';
import { runningPanel } from '../panel-pid.js';
import { UsageError, type CliCommand } from './command.js';

/** How long the panel may take to exit: stopping servers runs their stop sequences. */
const WAIT_MS = { keep: 60_000, stop: 10 * 60_000 } as const;

export const shutdownCommand: CliCommand = {
  name: 'shutdown',
  summary: 'stop the running panel (its game servers run on, unless --stop-servers)',
  usage: [
    'Usage: game-panel shutdown [--stop-servers]',
    '',
    'Stops the panel running on the configured DATA_DIR and waits until it has exited.',
    'Game servers run on and the panel takes them back at its next start; with',
    '--stop-servers, every game server is stopped first (its stop command, then signals),',
    'and those that were running start again at the next start.',
    '',
    'Under systemd, `systemctl stop game-panel` is the same as `game-panel shutdown`.',
  ].join('\n'),
  async run(args, io) {
    const unknown = args.filter((arg) => arg !== '--stop-servers');
    if (unknown.length > 0) throw new UsageError(`Unknown argument: ${unknown.join(' ')}`);
    const stopServers = args.includes('--stop-servers');
    const { dataDir } = loadPanelConfig(io.env).config;
    const pid = runningPanel(dataDir);
    if (pid === null) {
      io.err(
        `No panel runs on ${dataDir}.${stopServers ? ' Game servers it left running are taken back at its next start: start it, then run this again to stop them.' : ''}\n`,
      );
      return 1;
    }
    try {
      process.kill(pid, stopServers ? 'SIGUSR2' : 'SIGTERM');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? String(error);
      io.err(`Cannot signal the panel (pid ${pid}): ${code}\n`);
      return 1;
    }
    io.out(
      stopServers
        ? `Stopping the game servers, then the panel (pid ${pid})…\n`
        : `Stopping the panel (pid ${pid}); its game servers run on…\n`,
    );
    const deadline = Date.now() + WAIT_MS[stopServers ? 'stop' : 'keep'];
    while (runningPanel(dataDir) === pid) {
      if (Date.now() > deadline) {
        io.err(`The panel (pid ${pid}) has not exited yet; it goes on stopping.\n`);
        return 1;
      }
      await sleep(200);
    }
    io.out('The panel has stopped.\n');
    return 0;
  },
};
