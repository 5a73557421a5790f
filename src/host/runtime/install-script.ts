/**
 * An install script on disk, for a runtime to show at INSTALL_SCRIPT_DIR: a folder of its own
 * under the system's temporary folder, readable by everyone (a script is no secret, and the
 * server's unprivileged user binds it into its sandbox), removed once the install has ended.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export async function writeInstallScript(script: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'game-panel-install-'));
  await chmod(dir, 0o755);
  // Eggs written on Windows carry CRLF, which bash reads as part of each command.
  await writeFile(path.join(dir, 'install.sh'), script.replace(/\r\n/g, '\n'), { mode: 0o644 });
  return dir;
}

export async function removeInstallScript(dir: string | null): Promise<void> {
  if (dir !== null) await rm(dir, { recursive: true, force: true });
}
