/**
 * The repository's stand-in game server (test/fixtures/game-server.mjs: prints like one, coloured
 * lines with `colour`, obeys `say`, `stop`…), copied into a folder of its own under /var/tmp
 * (mode 0755) that any server can read, whoever it runs as: the panel is started with that folder
 * in SANDBOX_READ_ONLY_PATHS (a checkout under /root or /tmp would be out of the sandbox's reach).
 */
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { quote } from 'shell-quote';

export interface GameServerFixture {
  /** The folder to add to SANDBOX_READ_ONLY_PATHS. */
  readonly folder: string;
  /** The start command that runs it. */
  readonly startCommand: string;
  remove(): void;
}

export function gameServerFixture(): GameServerFixture {
  const folder = mkdtempSync('/var/tmp/panel-e2e-fixture-');
  chmodSync(folder, 0o755);
  const script = path.join(folder, 'game-server.mjs');
  copyFileSync(path.join('test', 'fixtures', 'game-server.mjs'), script);
  chmodSync(script, 0o644);
  return {
    folder,
    startCommand: quote([process.execPath, script]),
    remove: () => {
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
