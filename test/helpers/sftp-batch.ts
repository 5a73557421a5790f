/**
 * OpenSSH's own `sftp` client run in batch mode (`sftp -b`), with `sshpass` for passwords or a
 * key file. Nothing of the panel is imported: the browser journeys run it too, against a panel
 * started from the build (web/e2e/sftp.e2e.ts).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface BatchRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface Credential {
  readonly password?: string;
  /** A private key file (mode 0600). */
  readonly identity?: string;
}

/**
 * Runs `commands` with OpenSSH's `sftp -b` as `login` at 127.0.0.1:`port`, from `cwd`. Batch
 * mode stops at the first failing command (prefix one with `-` to go on), and the exit code says
 * whether all passed.
 */
export function sftpBatch(
  port: number,
  login: string,
  credential: Credential,
  commands: readonly string[],
  cwd: string,
): Promise<BatchRun> {
  return sftpBatchTo(['-P', String(port), `${login}@127.0.0.1`], credential, commands, cwd);
}

/**
 * `sftpBatch` to `destination`: the words that end sftp's command line, as a person types them
 * (`-P 2022 alice.world@host`, or one `sftp://alice.world@host:2022` address as the panel shows
 * it, docs/sftp.md). The host key is accepted unchecked.
 */
export async function sftpBatchTo(
  destination: readonly string[],
  credential: Credential,
  commands: readonly string[],
  cwd: string,
): Promise<BatchRun> {
  const dir = await mkdtemp(path.join(tmpdir(), 'sftp-batch-'));
  const batch = path.join(dir, 'batch');
  await writeFile(batch, `${commands.join('\n')}\n`);
  const options = [
    // Before -b, so that it wins over the BatchMode=yes that -b sets: sshpass types the password.
    ...(credential.password === undefined ? [] : ['-o', 'BatchMode=no']),
    '-b',
    batch,
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    // INFO, not less: OpenSSH shows the server's banner (why a sign-in was refused) only then.
    '-o',
    'LogLevel=INFO',
    '-o',
    'ConnectTimeout=20',
    ...(credential.identity === undefined
      ? ['-o', 'PubkeyAuthentication=no', '-o', 'PreferredAuthentications=password']
      : [
          '-i',
          credential.identity,
          '-o',
          'IdentitiesOnly=yes',
          '-o',
          'PreferredAuthentications=publickey',
        ]),
    ...destination,
  ];
  const [command, args] =
    credential.password === undefined
      ? ['sftp', options]
      : ['sshpass', ['-p', credential.password, 'sftp', ...options]];
  try {
    return await new Promise<BatchRun>((resolve, reject) => {
      const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('error', reject);
      child.on('close', (code) => {
        resolve({ code, stdout, stderr });
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
