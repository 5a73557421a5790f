/**
 * An OpenSSH server on a test node's address (helpers/docker-nodes.ts), so that its engine is
 * reached as `ssh://root@<address>:<port>`, as an operator's node may be: sshd runs in the node's
 * network namespace, lets in only the key given, and points `docker` at the node's engine
 * (`SetEnv DOCKER_HOST`), which dockerode's `docker system dial-stdio` then reaches. One per
 * test file, on a port of its own; stopped with `stop()` or when the file's process ends.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DockerNode } from './docker-nodes.js';

const SSHD = '/usr/sbin/sshd';

export type NodeSshd =
  | {
      readonly ok: true;
      /** `ssh://root@<address>:<port>`. */
      readonly dockerHost: string;
      /** The server's host key as known_hosts holds it: `ssh-ed25519 AAAA…`. */
      readonly hostKey: string;
      /** SSH connections the server let in so far (its log's `Accepted publickey` lines). */
      accepted(): number;
      stop(): void;
    }
  | { readonly ok: false; readonly why: string };

/** A new ed25519 key pair (in `dir`): the private key (OpenSSH) and the public line. */
export function sshKeyPair(
  dir: string,
  name: string,
  passphrase = '',
): { privateKey: string; publicKey: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', file]);
  return {
    privateKey: readFileSync(file, 'utf8'),
    publicKey: readFileSync(`${file}.pub`, 'utf8').trim(),
  };
}

/** sshd on `node`'s address that lets `authorizedKey` (a public key line) in as root. */
export async function sshdOnNode(node: DockerNode, authorizedKey: string): Promise<NodeSshd> {
  if (!existsSync(SSHD)) {
    const why = 'sshd (openssh-server) is not installed';
    if (process.env.CI) throw new Error(`CI must run the SSH node tests, but: ${why}`);
    return { ok: false, why };
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'gpn-sshd-'));
  const { publicKey } = sshKeyPair(dir, 'host_key');
  writeFileSync(path.join(dir, 'authorized_keys'), `${authorizedKey}\n`, { mode: 0o600 });
  // sshd's privilege separation needs it, owned by root and closed to others.
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 40_000);
    const config = path.join(dir, 'sshd_config');
    writeFileSync(
      config,
      [
        `Port ${port}`,
        `ListenAddress ${node.address}`,
        `HostKey ${path.join(dir, 'host_key')}`,
        'PidFile none',
        `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
        // The key files live under /tmp, which sshd's strict modes would refuse.
        'StrictModes no',
        'PubkeyAuthentication yes',
        'PasswordAuthentication no',
        'KbdInteractiveAuthentication no',
        'PermitRootLogin prohibit-password',
        'AllowUsers root',
        'UsePAM no',
        `SetEnv DOCKER_HOST=unix://${node.socketPath}`,
        '',
      ].join('\n'),
    );
    const child = spawn(
      'nsenter',
      [`--net=/run/netns/${node.netns}`, '--', SSHD, '-D', '-e', '-f', config],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let log = '';
    child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString()));
    if (await listening(node.address, port, () => child.exitCode !== null)) {
      const stop = () => {
        child.kill();
        rmSync(dir, { recursive: true, force: true });
      };
      process.once('exit', stop);
      return {
        ok: true,
        dockerHost: `ssh://root@${node.address}:${port}`,
        hostKey: publicKey.split(' ').slice(0, 2).join(' '),
        accepted: () =>
          log.split('\n').filter((line) => line.includes('Accepted publickey')).length,
        stop,
      };
    }
    child.kill();
    if (!/bind|address already in use/i.test(log)) {
      rmSync(dir, { recursive: true, force: true });
      return { ok: false, why: `sshd did not start: ${log.trim().slice(0, 500)}` };
    }
  }
  rmSync(dir, { recursive: true, force: true });
  return { ok: false, why: 'sshd found no free port' };
}

/** Whether `host:port` takes connections within 10 s (false at once when `gone()`). */
async function listening(host: string, port: number, gone: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !gone()) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => {
        resolve(false);
      });
    });
    if (open) return true;
    await sleep(100);
  }
  return false;
}
