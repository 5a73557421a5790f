/**
 * The SFTP server as people use it (docs/sftp.md): OpenSSH's `sftp` client against a real
 * panel, signing in with a password, an API key or an SSH key, moving real bytes, and everything a
 * hostile tenant would try: leaving the folder, writing without the right, going past the quota,
 * holding a session after a ban.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { rememberSecret, suiteScope, type TestPanel } from './helpers/app.js';
import {
  createServer,
  eventually,
  json,
  PASSWORD,
  register,
  setRole,
  type Session,
} from './helpers/factories.js';
import { call, sftpBatch, sftpClient, startSftpPanel } from './helpers/sftp-panel.js';

const run = promisify(execFile);

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** What the server's folder holds, temporary files of the panel included. */
const namesIn = async (dir: string): Promise<string[]> => (await readdir(dir)).sort();

describe('SFTP', () => {
  const scope = suiteScope();
  let panel: TestPanel;
  let port: number;
  let admin: Session;
  let alice: Session;
  let reader: Session;
  let work: string;
  let folder: string;

  const as = (session: Session, password = PASSWORD) => ({
    login: `${session.username}.survival`,
    credential: { password },
  });

  const batch = (
    who: { login: string; credential: { password?: string; identity?: string } },
    commands: string[],
  ) => sftpBatch(port, who.login, who.credential, commands, work);

  const api = async (
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    session: Session,
    payload?: unknown,
  ) =>
    panel.app.inject({
      method,
      url,
      headers: session.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  before(async () => {
    ({ panel, port } = await startSftpPanel(scope, {
      LOGIN_MAX_FAILURES_PER_ACCOUNT: '5',
    }));
    admin = await register(panel, 'admin');
    alice = await register(panel, 'alice');
    reader = await register(panel, 'reader');
    await createServer(panel, admin, 'survival', { owner: 'alice' });
    await createServer(panel, admin, 'other');
    const granted = await api('PUT', '/api/servers/survival/users/reader', admin, {
      permissions: ['files.read'],
    });
    assert.equal(granted.statusCode, 200, granted.body);
    folder = path.join(panel.config.serversDir, 'survival');
    work = await mkdtemp(path.join(tmpdir(), 'sftp-work-'));
  });
  after(async () => {
    await rm(work, { recursive: true, force: true });
  });

  it('puts and gets a file of 1 GiB, byte for byte, leaving no temporary file', async () => {
    const big = path.join(work, 'big.bin');
    await run('dd', ['if=/dev/urandom', `of=${big}`, 'bs=1M', 'count=1024', 'status=none']);
    const result = await batch(as(alice), ['put big.bin world.bin', 'get world.bin back.bin']);
    assert.equal(result.code, 0, result.stderr);
    const [sent, stored, back] = await Promise.all([
      sha256(big),
      sha256(path.join(folder, 'world.bin')),
      sha256(path.join(work, 'back.bin')),
    ]);
    assert.equal(stored, sent);
    assert.equal(back, sent);
    assert.deepEqual(await namesIn(folder), ['world.bin']);
    await rm(path.join(work, 'back.bin'));
    await rm(big);
    await rm(path.join(folder, 'world.bin'));
  });

  it('resumes an upload that was interrupted, and a cut connection leaves nothing', async () => {
    const file = path.join(work, 'resume.bin');
    const content = Buffer.alloc(3 * 1024 * 1024);
    for (let i = 0; i < content.length; i += 1) content[i] = (i * 7) % 251;
    await writeFile(file, content);

    // The client stops after the first MiB and closes the file (Ctrl-C in sftp does this).
    const first = await sftpClient(port, `alice.survival`, PASSWORD);
    const handle = await call<Buffer>((done) => {
      first.sftp.open('/resume.bin', 'w', done);
    });
    await call((done) => {
      first.sftp.write(handle, content, 0, 1024 * 1024, 0, done);
    });
    await call((done) => {
      first.sftp.close(handle, done);
    });
    first.client.end();
    assert.equal((await stat(path.join(folder, 'resume.bin'))).size, 1024 * 1024);

    const resumed = await batch(as(alice), ['reput resume.bin']);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.deepEqual(await readFile(path.join(folder, 'resume.bin')), content);

    // A connection cut before the file is closed: nothing under the name, no temporary file.
    const cut = await sftpClient(port, `alice.survival`, PASSWORD);
    const open = await call<Buffer>((done) => {
      cut.sftp.open('/cut.bin', 'w', done);
    });
    await call((done) => {
      cut.sftp.write(open, content, 0, 1024 * 1024, 0, done);
    });
    cut.client.destroy();
    await cut.closed;
    await eventually(async () => {
      const names = await namesIn(folder);
      return names.length === 1 && names[0] === 'resume.bin' ? names : undefined;
    }, 'the cut upload to leave nothing');
    await rm(path.join(folder, 'resume.bin'));
  });

  it('puts and gets a folder tree recursively', async () => {
    const tree = path.join(work, 'mods');
    await mkdir(path.join(tree, 'a', 'b'), { recursive: true });
    await writeFile(path.join(tree, 'one.txt'), 'one\n');
    await writeFile(path.join(tree, 'a', 'two.txt'), 'two\n');
    await writeFile(path.join(tree, 'a', 'b', 'three.jar'), Buffer.alloc(100_000, 3));
    const result = await batch(as(alice), ['put -R mods', 'get -R mods fetched']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await readFile(path.join(folder, 'mods', 'a', 'two.txt'), 'utf8'), 'two\n');
    assert.deepEqual(
      await readFile(path.join(work, 'fetched', 'a', 'b', 'three.jar')),
      Buffer.alloc(100_000, 3),
    );
    const listed = await batch(as(alice), ['ls -l mods']);
    assert.match(listed.stdout, /one\.txt/);
    assert.match(listed.stdout, /^d.*\sa$/m);
  });

  it('keeps every path inside the server folder', async () => {
    const outside = path.join(panel.config.serversDir, 'other', 'secret.txt');
    await writeFile(outside, 'not yours\n');
    await symlink('/etc', path.join(folder, 'etc-link'));
    await symlink('../other', path.join(folder, 'other-link'));
    for (const command of [
      'get ../other/secret.txt',
      'get /../other/secret.txt',
      'get etc-link/passwd',
      'get other-link/secret.txt',
      'put /dev/null other-link/dropped.txt',
      'rename mods ../mods',
    ]) {
      const result = await batch(as(alice), [command]);
      assert.notEqual(result.code, 0, `${command} must fail: ${result.stdout}`);
      assert.doesNotMatch(result.stderr + result.stdout, /root:x:0|not yours/);
    }
    // Listing through the link shows the link, never what is behind it.
    const listed = await batch(as(alice), ['ls etc-link/', '-ls -l etc-link/']);
    assert.doesNotMatch(listed.stdout, /passwd|hostname/);
    // A symlink made through SFTP that points out leads nowhere.
    const made = await batch(as(alice), ['-ln -s /etc/passwd pass-link', 'get pass-link']);
    assert.notEqual(made.code, 0);
    await assert.rejects(readFile(path.join(work, 'pass-link')));
    await assert.rejects(stat(path.join(panel.config.serversDir, 'other', 'dropped.txt')));
    // `..` above the root is the root: the listing is the server's own.
    const root = await batch(as(alice), ['ls /']);
    assert.equal(root.code, 0, root.stderr);
    assert.match(root.stdout, /mods/);
    await rm(path.join(folder, 'etc-link'));
    await rm(path.join(folder, 'other-link'));
    await rm(path.join(folder, 'pass-link'), { force: true });
  });

  it('lets files.read read, and refuses it every change', async () => {
    const reads = await batch(as(reader), ['get mods/one.txt read.txt', 'ls mods']);
    assert.equal(reads.code, 0, reads.stderr);
    assert.equal(await readFile(path.join(work, 'read.txt'), 'utf8'), 'one\n');
    for (const command of [
      'put read.txt mods/new.txt',
      'mkdir made',
      'rm mods/one.txt',
      'rename mods/one.txt mods/moved.txt',
      'chmod 600 mods/one.txt',
    ]) {
      const result = await batch(as(reader), [command]);
      assert.notEqual(result.code, 0, `${command} must be refused`);
      assert.match(result.stderr, /Permission denied/i, command);
    }
    assert.equal(await readFile(path.join(folder, 'mods', 'one.txt'), 'utf8'), 'one\n');
  });

  it('refuses a wrong password, a server not theirs, and throttles guessing', async () => {
    const wrong = await batch(as(alice, 'wrong password'), ['ls']);
    assert.notEqual(wrong.code, 0);
    const notTheirs = await batch({ login: 'reader.other', credential: { password: PASSWORD } }, [
      'ls',
    ]);
    assert.notEqual(notTheirs.code, 0);
    assert.match(notTheirs.stderr, /may not read the files of other/);

    const audit = json<{ data: { action: string; outcome: string; via: string }[] }>(
      await api('GET', '/api/audit?action=sftp.login', admin),
    ).data;
    assert.ok(audit.some((entry) => entry.outcome === 'failed' && entry.via === 'sftp'));
    assert.ok(audit.some((entry) => entry.outcome === 'ok' && entry.via === 'sftp'));
  });

  it('records every change in the audit log with via sftp', async () => {
    await writeFile(path.join(work, 'empty.txt'), '');
    const made = await batch(as(alice), ['mkdir audited', 'put empty.txt audited/empty.txt']);
    assert.equal(made.code, 0, made.stderr);
    const entries = json<{
      data: { action: string; target: string; via: string; actor: string }[];
    }>(await api('GET', '/api/audit?via=sftp&action=file.', admin)).data;
    const seen = entries.map((entry) => `${entry.action} ${entry.target} ${entry.actor}`);
    assert.ok(seen.includes('file.create /audited alice'), seen.join('\n'));
    assert.ok(seen.includes('file.upload /audited/empty.txt alice'), seen.join('\n'));
  });

  it('refuses a write past the disk quota and keeps nothing of it', async () => {
    await createServer(panel, admin, 'tiny', { owner: 'alice', limits: { diskBytes: 1_000_000 } });
    await writeFile(path.join(work, 'two-mb.bin'), Buffer.alloc(2_000_000, 1));
    const result = await batch({ login: 'alice.tiny', credential: { password: PASSWORD } }, [
      'put two-mb.bin',
    ]);
    // OpenSSH prints the status ("Failure"), not the server's words ("disk quota exceeded",
    // which FileZilla and WinSCP show; test/sftp-session.test.ts checks them).
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /Failure/);
    assert.deepEqual(await namesIn(path.join(panel.config.serversDir, 'tiny')), []);
    const df = await batch({ login: 'alice.tiny', credential: { password: PASSWORD } }, ['df']);
    assert.equal(df.code, 0, df.stderr);
    // `df` shows the quota as the disk: 1,000,000 bytes is 976 KiB.
    assert.match(df.stdout, /\b97[0-9]\b/);
  });

  it('takes an API key as the password, within its servers and permissions', async () => {
    const made = await api('POST', '/api/profile/api-keys', alice, {
      password: PASSWORD,
      name: 'uploader',
      servers: ['survival'],
      permissions: ['files.read'],
    });
    assert.equal(made.statusCode, 200, made.body);
    const { key: stored, token: key } = json<{ data: { key: { id: number }; token: string } }>(
      made,
    ).data;
    rememberSecret(key);
    const reads = await batch({ login: 'alice.survival', credential: { password: key } }, ['ls']);
    assert.equal(reads.code, 0, reads.stderr);
    const writes = await batch({ login: 'alice.survival', credential: { password: key } }, [
      'mkdir by-key',
    ]);
    assert.match(writes.stderr, /Permission denied/i);
    const elsewhere = await batch({ login: 'alice.tiny', credential: { password: key } }, ['ls']);
    assert.notEqual(elsewhere.code, 0);
    const someoneElse = await batch({ login: 'reader.survival', credential: { password: key } }, [
      'ls',
    ]);
    assert.notEqual(someoneElse.code, 0);
    // Revoked: a session held with it ends at once.
    const held = await sftpClient(port, 'alice.survival', key);
    const revoked = await api('DELETE', `/api/profile/api-keys/${stored.id}`, alice);
    assert.equal(revoked.statusCode, 200, revoked.body);
    await held.closed;
  });

  it('signs in with an SSH key only, and refuses the password of a two-factor account', async () => {
    const keyFile = path.join(work, 'id_ed25519');
    await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyFile]);
    await chmod(keyFile, 0o600);
    const publicKey = (await readFile(`${keyFile}.pub`, 'utf8')).trim();
    const added = await api('POST', '/api/profile/ssh-keys', alice, {
      name: 'laptop',
      publicKey,
      password: PASSWORD,
    });
    assert.equal(added.statusCode, 201, added.body);
    const byKey = await batch({ login: 'alice.survival', credential: { identity: keyFile } }, [
      'ls',
    ]);
    assert.equal(byKey.code, 0, byKey.stderr);

    // A second factor on: the password alone is refused, with the reason; the key still works.
    const { Secret, TOTP } = await import('otpauth');
    const setup = await api('POST', '/api/profile/2fa/setup', alice, { password: PASSWORD });
    const secret = json<{ data: { secret: string } }>(setup).data.secret;
    const totp = new TOTP({ secret: Secret.fromBase32(secret) });
    const enabled = await api('POST', '/api/profile/2fa/enable', alice, { code: totp.generate() });
    assert.equal(enabled.statusCode, 200, enabled.body);
    const refused = await batch(as(alice), ['ls']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /two factors/);
    const stillByKey = await batch({ login: 'alice.survival', credential: { identity: keyFile } }, [
      'ls',
    ]);
    assert.equal(stillByKey.code, 0, stillByKey.stderr);

    // The key deleted: refused.
    const keys = json<{ data: { id: number }[] }>(
      await api('GET', '/api/profile/ssh-keys', alice),
    ).data;
    const removed = await api('DELETE', `/api/profile/ssh-keys/${keys[0]?.id}`, alice);
    assert.equal(removed.statusCode, 204, removed.body);
    const gone = await batch({ login: 'alice.survival', credential: { identity: keyFile } }, [
      'ls',
    ]);
    assert.notEqual(gone.code, 0);
  });

  it('ends an open session at once when its account is banned', async () => {
    const held = await sftpClient(port, 'reader.survival', PASSWORD);
    const listed = await call<unknown[]>((done) => {
      held.sftp.readdir('/', done);
    });
    assert.ok(listed.length > 0);
    await setRole(panel, admin, 'reader', 'banned');
    await held.closed;
    const again = await batch(as(reader), ['ls']);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /banned/);
    await setRole(panel, admin, 'reader', 'user');
  });

  it('ends an open session when the permission to read is taken away', async () => {
    const held = await sftpClient(port, 'reader.survival', PASSWORD);
    const removed = await api('DELETE', '/api/servers/survival/users/reader', admin);
    assert.ok([200, 204].includes(removed.statusCode), removed.body);
    await held.closed;
  });
});

describe('SFTP limits', () => {
  it('holds one account to its sessions, and ends an idle one', async (t) => {
    const { panel, port } = await startSftpPanel(t, {
      SFTP_MAX_SESSIONS_PER_USER: '1',
      SFTP_IDLE_SECONDS: '10',
    });
    const admin = await register(panel, 'admin');
    await createServer(panel, admin, 'world');
    const first = await sftpClient(port, 'admin.world', PASSWORD);
    const work = await mkdtemp(path.join(tmpdir(), 'sftp-limits-'));
    const second = await sftpBatch(port, 'admin.world', { password: PASSWORD }, ['ls'], work);
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /Too many SFTP sessions/);
    // Nothing asked for 10 s: the first session is ended.
    await first.closed;
    const third = await sftpBatch(port, 'admin.world', { password: PASSWORD }, ['ls'], work);
    assert.equal(third.code, 0, third.stderr);
    await rm(work, { recursive: true, force: true });
  });
});
