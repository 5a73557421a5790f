/**
 * The stand-in game server of test/fixtures, copied where any server can read it whoever it runs
 * as and whatever the sandbox shows: a folder of its own under /var/tmp (mode 0755), which test
 * panels add to SANDBOX_READ_ONLY_PATHS (a checkout under /root or /tmp would be out of reach).
 */
import { chmodSync, copyFileSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let fixtureScript: string | undefined;

export function gameServerScript(): string {
  if (fixtureScript) return fixtureScript;
  const original = fileURLToPath(new URL('../fixtures/game-server.mjs', import.meta.url));
  const dir = mkdtempSync('/var/tmp/panel-fixture-');
  chmodSync(dir, 0o755);
  const copy = path.join(dir, 'game-server.mjs');
  copyFileSync(original, copy);
  chmodSync(copy, 0o644);
  return (fixtureScript = copy);
}

/** The folder servers must be able to read for the fixture (SANDBOX_READ_ONLY_PATHS). */
export const fixtureFolder = (): string => path.dirname(gameServerScript());
