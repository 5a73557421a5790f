/**
 * The SFTP host key (src/modules/sftp/host-key.ts): ssh2's generator cuts the leading zero bytes
 * off one Ed25519 public key in 256, a key no client accepts. The panel never makes such a key,
 * and one an earlier panel made is replaced; a good key is kept, whatever else happens.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import ssh2 from 'ssh2';
import { readPublicKey } from '../src/modules/ssh-keys/public-key.js';
import { HOST_KEY_FILE, loadHostKey, newEd25519Pair } from '../src/modules/sftp/host-key.js';

/** The length of the key inside an OpenSSH `ssh-ed25519` public line. */
const keyLength = (line: string): number => {
  const blob = Buffer.from(line.split(' ')[1] ?? '', 'base64');
  const nameEnd = 4 + blob.readUInt32BE(0);
  return blob.readUInt32BE(nameEnd);
};

describe('the SFTP host key', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'sftp-host-key-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('makes only whole Ed25519 keys, which the panel itself accepts', () => {
    // One in 256 of ssh2's would be cut: among 1,500, one at least all but surely.
    for (let i = 0; i < 1_500; i++) {
      const pair = newEd25519Pair();
      assert.equal(keyLength(pair.public), 32, pair.public);
      assert.ok('key' in readPublicKey(pair.public), pair.public);
    }
  });

  it('replaces a key an earlier panel made cut short, and keeps a good one', () => {
    let cut: { private: string; public: string } | undefined;
    while (cut === undefined) {
      const made = ssh2.utils.generateKeyPairSync('ed25519');
      if (keyLength(made.public) !== 32) cut = made;
    }
    const dir = dataDir();
    writeFileSync(path.join(dir, HOST_KEY_FILE), cut.private, { mode: 0o600 });

    const loaded = loadHostKey(dir);
    const stored = readFileSync(path.join(dir, HOST_KEY_FILE), 'utf8');
    assert.notEqual(stored, cut.private);
    const parsed = ssh2.utils.parseKey(stored);
    assert.ok(!(parsed instanceof Error) && !Array.isArray(parsed));
    const line = `ssh-ed25519 ${parsed.getPublicSSH().toString('base64')}`;
    assert.equal(keyLength(line), 32);
    assert.equal(
      readdirSync(dir).filter((name) => name.startsWith(`${HOST_KEY_FILE}.cut-`)).length,
      1,
      'the cut key is moved aside, not deleted',
    );
    // A good key stays: the same fingerprint at the next start.
    assert.equal(loadHostKey(dir).fingerprint, loaded.fingerprint);
    assert.equal(readFileSync(path.join(dir, HOST_KEY_FILE), 'utf8'), stored);
  });
});
