/**
 * SSH public keys through the HTTP surface, with keys made by the real `ssh-keygen`: Ed25519,
 * ECDSA and RSA of 2048 bits accepted with the fingerprint OpenSSH prints; private keys,
 * certificates, DSA, short RSA and garbage refused with the reason on `body/publicKey`; the same
 * key twice on one account refused; added only with the password; each user's own; deleted at
 * once, telling open SFTP sessions; audited; never through an API key; gone with the account; and
 * what the SFTP server reads back. `GET /api/sftp` while no SFTP server is wired.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
// ssh2 is CommonJS: Node's ESM loader finds no named exports in it.
import ssh2 from 'ssh2';
import { PanelEvents } from '../src/events.js';
import { SshKeysRepository } from '../src/modules/ssh-keys/ssh-keys.repository.js';
import { SshKeysService } from '../src/modules/ssh-keys/ssh-keys.service.js';
import { rememberSecret, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import {
  PASSWORD,
  assertError,
  bearer,
  json,
  register,
  type Session,
} from './helpers/factories.js';

interface SshKey {
  id: number;
  name: string;
  algorithm: string;
  publicKey: string;
  fingerprint: string;
  createdAt: string;
  lastUsedAt: string | null;
}

interface Made {
  /** The .pub file's line, comment included. */
  readonly line: string;
  /** The private key file's text. */
  readonly secret: string;
  /** What `ssh-keygen -l` prints. */
  readonly fingerprint: string;
}

/** A DSA public key, for an OpenSSH built without DSA (9.8 and later cannot make one). */
const DSA_FALLBACK =
  'ssh-dss AAAAB3NzaC1kc3MAAACBAJ8ZtKAkF/5TWPWE6GmWqzbHPN3FdrK1RiDnHRzoS0rkNt38+vPCtZ5nVq/nWw3f7LCWQUmDIg9QrLK4m6yvR+bz1aQikNVLwS4P99WnowDWbsYPRkIeaY6z3DT8EMT3DHrCoxcpBxsbGrY1gSFFyrfUDcXDa66Re8nuOq3VScKpAAAAFQD1dQBWMU0DjP3BXV1UTE8ocDoI/QAAAIAF7o2z0QP6a55AkwCQb8bYl9ldb85ZEQjWCRF3R1PLS9sH66MxTMcFuUW9IsZ/TWw4zZd72qSFzvc2AY3dLC/wCc71CzNYIfq5LfQIi+qgIVMmgtWBxCaMuqGvIw3Wqhpf37/1bwxaoR6oYq40eK6b2Nh6LVT/eKHbDxAR8Oq79wAAAIEAkmdJ4hlCepjnuj5Tn4ldQs12VKxhJ21Wrn4NAnkh6QW/5qKZLz1f3UHsR7AtEjKaixK1kpNEdtjWnUHXFVVo6tOMvfh+O/dBGZa53/+4ufVSsghhuiSLDVmJOCv5hT8Yb84ztYmFtzVTQ4l2gzs1q+tSbiV43cRqD4ZZo/eLIu4= me@host';

describe('SSH keys', () => {
  let panel: TestPanel;
  let admin: Session;
  let member: Session;
  let dir: string;
  let clock = Date.now();
  const events = new PanelEvents();
  const keys: Record<string, Made> = {};

  const call = (
    headers: { authorization: string },
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    payload?: unknown,
  ) =>
    panel.app.inject({
      method,
      url,
      headers,
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
  const add = (session: Session, body: Record<string, unknown>) =>
    call(session.headers, 'POST', '/api/profile/ssh-keys', { password: PASSWORD, ...body });
  const list = async (session: Session): Promise<SshKey[]> => {
    const response = await call(session.headers, 'GET', '/api/profile/ssh-keys');
    assert.equal(response.statusCode, 200, response.body);
    return json<{ data: SshKey[] }>(response).data;
  };
  const rows = async () => panel.db.kysely.selectFrom('ssh_keys').selectAll().execute();
  const userId = async (username: string) =>
    (
      await panel.db.kysely
        .selectFrom('users')
        .select('id')
        .where('username', '=', username)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow()
    ).id;

  /** Makes a key pair with ssh-keygen; `extra` are its type and size flags. */
  function keygen(name: string, ...extra: string[]): Made | null {
    const file = path.join(dir, name);
    const made = spawnSync(
      'ssh-keygen',
      ['-q', ...extra, '-N', '', '-C', 'alice@laptop', '-f', file],
      { encoding: 'utf8' },
    );
    if (made.status !== 0) return null;
    return described(file);
  }
  function described(file: string, pub = `${file}.pub`): Made {
    const line = execFileSync('cat', [pub], { encoding: 'utf8' }).trim();
    const printed = execFileSync('ssh-keygen', ['-l', '-f', pub], { encoding: 'utf8' });
    const secret = execFileSync('cat', [file], { encoding: 'utf8' });
    // The private key's base64 lines must never reach a log or the audit log.
    for (const part of secret.split('\n')) if (!part.startsWith('-----')) rememberSecret(part);
    return { line, secret, fingerprint: printed.split(' ')[1] ?? '' };
  }
  const made = (name: string): Made => {
    const key = keys[name];
    assert.ok(key, `no key ${name}`);
    return key;
  };

  const suite = suiteScope();
  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ssh-keys-test-'));
    for (const [name, ...flags] of [
      ['ed25519', '-t', 'ed25519'],
      ['ecdsa256', '-t', 'ecdsa', '-b', '256'],
      ['ecdsa384', '-t', 'ecdsa', '-b', '384'],
      ['ecdsa521', '-t', 'ecdsa', '-b', '521'],
      ['rsa2048', '-t', 'rsa', '-b', '2048'],
      ['rsa1024', '-t', 'rsa', '-b', '1024'],
      ['other', '-t', 'ed25519'],
    ] as const) {
      const key = keygen(name, ...flags);
      assert.ok(key, `ssh-keygen made no ${name} key`);
      keys[name] = key;
    }
    const encrypted = path.join(dir, 'encrypted');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'a passphrase', '-f', encrypted]);
    keys.encrypted = described(encrypted);
    // A certificate of the Ed25519 key, signed by a CA key.
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'ca')]);
    execFileSync('ssh-keygen', [
      '-q',
      '-s',
      path.join(dir, 'ca'),
      '-I',
      'alice',
      '-n',
      'alice',
      path.join(dir, 'ed25519.pub'),
    ]);
    keys.dsa = keygen('dsa', '-t', 'dsa') ?? { line: DSA_FALLBACK, secret: '', fingerprint: '' };

    panel = await startPanel(suite, {}, { now: () => new Date(clock), events });
    admin = await register(panel, 'admin');
    member = await register(panel, 'member');
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('accepts Ed25519, ECDSA and RSA of 2048 bits, with the fingerprint ssh-keygen prints', async () => {
    const accepted = [
      ['ed25519', 'ssh-ed25519'],
      ['ecdsa256', 'ecdsa-sha2-nistp256'],
      ['ecdsa384', 'ecdsa-sha2-nistp384'],
      ['ecdsa521', 'ecdsa-sha2-nistp521'],
      ['rsa2048', 'ssh-rsa'],
    ] as const;
    for (const [name, algorithm] of accepted) {
      const key = made(name);
      const response = await add(member, { name: `  my ${name} `, publicKey: `${key.line}\n` });
      assert.equal(response.statusCode, 201, response.body);
      const { data } = json<{ data: SshKey }>(response);
      assert.equal(data.name, `my ${name}`);
      assert.equal(data.algorithm, algorithm);
      assert.match(key.fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
      assert.equal(data.fingerprint, key.fingerprint);
      // The comment is dropped; the key is kept as OpenSSH writes it.
      assert.equal(data.publicKey, key.line.replace(/ alice@laptop$/, ''));
      assert.equal(data.lastUsedAt, null);
      assert.equal(data.createdAt, new Date(clock).toISOString());
    }
    const listed = await list(member);
    assert.deepEqual(
      listed.map((key) => key.algorithm),
      accepted.map(([, algorithm]) => algorithm),
    );
    assert.ok(!JSON.stringify(await rows()).includes('alice@laptop'), 'a comment is stored');
  });

  it("reads the SSH2 block PuTTYgen saves, and a line a terminal's copy broke", async () => {
    const carol = await register(panel, 'carol');
    const block = execFileSync('ssh-keygen', ['-e', '-f', path.join(dir, 'rsa2048.pub')], {
      encoding: 'utf8',
    });
    assert.match(block, /^---- BEGIN SSH2 PUBLIC KEY ----/);
    const fromBlock = await add(carol, { name: 'putty', publicKey: block });
    assert.equal(fromBlock.statusCode, 201, fromBlock.body);
    assert.equal(json<{ data: SshKey }>(fromBlock).data.fingerprint, made('rsa2048').fingerprint);

    const line = made('ecdsa384').line;
    const broken = `${line.slice(0, 70)}\n${line.slice(70, 140)}\r\n${line.slice(140)}`;
    const fromBroken = await add(carol, { name: 'broken', publicKey: broken });
    assert.equal(fromBroken.statusCode, 201, fromBroken.body);
    assert.equal(json<{ data: SshKey }>(fromBroken).data.fingerprint, made('ecdsa384').fingerprint);
  });

  it('refuses what is not an accepted public key, saying why on body/publicKey', async () => {
    const dave = await register(panel, 'dave');
    const ed = made('ed25519').line;
    const cases: [what: string, publicKey: string, reason: RegExp][] = [
      ['a private key', made('ed25519').secret, /private key/],
      ['a private key with a passphrase', made('encrypted').secret, /private key/],
      [
        'a certificate',
        await readFile(path.join(dir, 'ed25519-cert.pub'), 'utf8'),
        /Certificates are not accepted/,
      ],
      ['a DSA key', made('dsa').line, /DSA keys are no longer safe/],
      ['an RSA key of 1024 bits', made('rsa1024').line, /has 1024 bits.*at least 2048/],
      ['garbage', 'hello, I am a key', /not an SSH public key.*id_ed25519\.pub/],
      ['nothing but spaces', '   \n ', /Paste your public key/],
      ['two keys', `${ed}\n${made('other').line}`, /one key at a time/],
      ['an authorized_keys line', `from="10.0.0.1" ${ed}`, /Options of an authorized_keys line/],
      ['a cut line', ed.slice(0, 40), /cut short or damaged/],
      ['a type with the blob of another', `ssh-rsa ${ed.split(' ')[1] ?? ''}`, /cut short/],
      [
        'a PEM public key',
        execFileSync('ssh-keygen', ['-e', '-m', 'PKCS8', '-f', path.join(dir, 'rsa2048.pub')], {
          encoding: 'utf8',
        }),
        /not an SSH public key/,
      ],
      ['a security key', 'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5', /Security-key/],
    ];
    for (const [what, publicKey, reason] of cases) {
      const response = await add(dave, { name: what, publicKey });
      assertError(response, 400, 'VALIDATION_FAILED');
      const { details } = json<{ details: { path: string; message: string }[] }>(response);
      const [detail, ...more] = details;
      assert.ok(detail && more.length === 0, what);
      assert.equal(detail.path, 'body/publicKey', what);
      assert.match(detail.message, reason, what);
      assert.ok(!response.body.includes('PRIVATE KEY'), `${what}: the answer repeats the key`);
    }
    const blankName = await add(dave, { name: '   ', publicKey: ed });
    assertError(blankName, 400, 'VALIDATION_FAILED');
    assert.equal(json<{ details: { path: string }[] }>(blankName).details[0]?.path, 'body/name');
    for (const body of [
      { name: 'no key' },
      { publicKey: ed },
      { name: 'long', publicKey: 'x'.repeat(16_385) },
      { name: 'number', publicKey: 42 },
      { name: 'extra', publicKey: ed, comment: 'mine' },
    ]) {
      assertError(await add(dave, body), 400, 'VALIDATION_FAILED');
    }
    assert.deepEqual(await list(dave), []);
  });

  it('is added only with the password, and a code when two-factor sign-in is on', async () => {
    const erin = await register(panel, 'erin');
    const publicKey = made('ed25519').line;
    const missing = await call(erin.headers, 'POST', '/api/profile/ssh-keys', {
      name: 'laptop',
      publicKey,
    });
    assertError(missing, 400, 'VALIDATION_FAILED');
    assert.match(missing.body, /body\/password/);
    assertError(
      await add(erin, { name: 'laptop', publicKey, password: 'wrong' }),
      403,
      'WRONG_PASSWORD',
    );
    assert.deepEqual(await list(erin), []);

    const setup = await call(erin.headers, 'POST', '/api/profile/2fa/setup', {
      password: PASSWORD,
    });
    assert.equal(setup.statusCode, 200, setup.body);
    const totp = new TOTP({
      issuer: 'Game panel',
      label: 'erin',
      secret: Secret.fromBase32(json<{ data: { secret: string } }>(setup).data.secret),
    });
    const code = () => totp.generate({ timestamp: clock });
    const enabled = await call(erin.headers, 'POST', '/api/profile/2fa/enable', { code: code() });
    assert.equal(enabled.statusCode, 200, enabled.body);
    clock += 30_000;
    const noCode = await add(erin, { name: 'laptop', publicKey });
    assertError(noCode, 400, 'VALIDATION_FAILED');
    assert.match(noCode.body, /body\/code/);
    const wrong = String((Number(code()) + 1) % 1_000_000).padStart(6, '0');
    assertError(
      await add(erin, { name: 'laptop', publicKey, code: wrong }),
      401,
      'INVALID_CREDENTIALS',
    );
    assert.deepEqual(await list(erin), []);
    const added = await add(erin, { name: 'laptop', publicKey, code: code() });
    assert.equal(added.statusCode, 201, added.body);
  });

  it('refuses the same key twice on one account, while another account may hold it', async () => {
    const frank = await register(panel, 'frank');
    const key = made('other');
    const first = await add(frank, { name: 'desktop', publicKey: key.line });
    assert.equal(first.statusCode, 201, first.body);
    // The same key with another comment, or in PuTTYgen's form, is the same key.
    const again = await add(frank, {
      name: 'desktop again',
      publicKey: key.line.replace('alice@laptop', 'other@comment'),
    });
    assertError(again, 409, 'ALREADY_EXISTS');
    assert.match(json<{ message: string }>(again).message, /"desktop"/);
    const block = execFileSync('ssh-keygen', ['-e', '-f', path.join(dir, 'other.pub')], {
      encoding: 'utf8',
    });
    assertError(await add(frank, { name: 'as a block', publicKey: block }), 409, 'ALREADY_EXISTS');
    assert.equal((await list(frank)).length, 1);
    // Another account: the SFTP username names the account, so the key may be on both.
    const theirs = await add(admin, { name: 'shared', publicKey: key.line });
    assert.equal(theirs.statusCode, 201, theirs.body);
  });

  it("shows and deletes only one's own keys", async () => {
    const [mine] = await list(member);
    assert.ok(mine);
    const adminKeys = await list(admin);
    assert.ok(!adminKeys.some((key) => key.id === mine.id), "another user's key is listed");
    assertError(
      await call(admin.headers, 'DELETE', `/api/profile/ssh-keys/${mine.id}`),
      404,
      'NOT_FOUND',
    );
    assertError(await call(member.headers, 'DELETE', '/api/profile/ssh-keys/2147483647'), 404);
    assertError(await call(member.headers, 'DELETE', '/api/profile/ssh-keys/abc'), 400);
    assertError(await call(member.headers, 'DELETE', '/api/profile/ssh-keys/0'), 400);
    assert.ok((await list(member)).some((key) => key.id === mine.id));
  });

  it('is deleted at once, telling the SFTP sessions signed in with it', async () => {
    const heard: number[] = [];
    const listener = (id: number) => heard.push(id);
    events.on('access-changed', listener);
    try {
      const [first] = await list(member);
      assert.ok(first);
      const deleted = await call(member.headers, 'DELETE', `/api/profile/ssh-keys/${first.id}`);
      assert.equal(deleted.statusCode, 204, deleted.body);
      assert.equal(deleted.body, '');
      assert.deepEqual(heard, [await userId('member')]);
      assert.ok(!(await list(member)).some((key) => key.id === first.id));
      // Deleting it again finds nothing, and tells nobody.
      assertError(
        await call(member.headers, 'DELETE', `/api/profile/ssh-keys/${first.id}`),
        404,
        'NOT_FOUND',
      );
      assert.equal(heard.length, 1);
    } finally {
      events.off('access-changed', listener);
    }
  });

  it('is managed only in a signed-in session, never with an API key', async () => {
    const apiKey = await call(member.headers, 'POST', '/api/profile/api-keys', {
      name: 'script',
      password: PASSWORD,
    });
    assert.equal(apiKey.statusCode, 200, apiKey.body);
    const token = json<{ data: { token: string } }>(apiKey).data.token;
    rememberSecret(token);
    const headers = bearer(token);
    const [key] = await list(member);
    assert.ok(key);
    const before = (await rows()).length;
    for (const [method, url, body] of [
      ['GET', '/api/profile/ssh-keys', undefined],
      [
        'POST',
        '/api/profile/ssh-keys',
        { name: 'by key', publicKey: made('ecdsa521').line, password: PASSWORD },
      ],
      ['DELETE', `/api/profile/ssh-keys/${key.id}`, undefined],
    ] as const) {
      assertError(await call(headers, method, url, body), 403, 'SESSION_REQUIRED');
    }
    assert.equal((await rows()).length, before);
    assertError(await call({ authorization: '' }, 'GET', '/api/profile/ssh-keys'), 401);
  });

  it('is audited, without the key itself', async () => {
    const grace = await register(panel, 'grace');
    const added = await add(grace, { name: 'audited', publicKey: made('ecdsa256').line });
    assert.equal(added.statusCode, 201, added.body);
    const { id } = json<{ data: SshKey }>(added).data;
    const deleted = await call(grace.headers, 'DELETE', `/api/profile/ssh-keys/${id}`);
    assert.equal(deleted.statusCode, 204, deleted.body);
    const refused = await add(grace, {
      name: 'bad',
      publicKey: made('ed25519').line,
      password: 'no',
    });
    assertError(refused, 403, 'WRONG_PASSWORD');

    const entries = async (action: string) => {
      const response = await call(admin.headers, 'GET', `/api/audit?action=${action}&actor=grace`);
      assert.equal(response.statusCode, 200, response.body);
      return json<{
        data: {
          actor: string;
          via: string;
          target: string;
          outcome: string;
          status: number;
          details: Record<string, unknown>;
        }[];
      }>(response).data;
    };
    const created = await entries('ssh-key.create');
    assert.deepEqual(
      created.map((entry) => [
        entry.actor,
        entry.via,
        entry.outcome,
        entry.status,
        entry.details.name,
      ]),
      [
        ['grace', 'session', 'failed', 403, 'bad'],
        ['grace', 'session', 'ok', 201, 'audited'],
      ],
    );
    const removed = await entries('ssh-key.delete');
    assert.deepEqual(
      removed.map((entry) => [entry.target, entry.outcome, entry.status]),
      [[String(id), 'ok', 204]],
    );
    const log = JSON.stringify(await panel.db.kysely.selectFrom('audit_log').selectAll().execute());
    for (const key of Object.values(keys)) {
      const blob = key.line.split(' ')[1] ?? '';
      assert.ok(!log.includes(blob.slice(20, 60)), 'the audit log holds a key');
    }
  });

  it('holds at most 50 keys a user', async () => {
    const henry = await register(panel, 'henry');
    const id = await userId('henry');
    await panel.db.kysely
      .insertInto('ssh_keys')
      .values(
        Array.from({ length: 50 }, (_, n) => ({
          user_id: id,
          name: `key ${n}`,
          algorithm: 'ssh-ed25519',
          public_key: `ssh-ed25519 AAAA${n}`,
          fingerprint: `SHA256:filler${n}`,
          created_at: new Date(clock).toISOString(),
          last_used_at: null,
        })),
      )
      .execute();
    const over = await add(henry, { name: 'one more', publicKey: made('ed25519').line });
    assertError(over, 409, 'CONFLICT');
    assert.match(json<{ message: string }>(over).message, /50 SSH keys/);
  });

  it('goes with its account', async () => {
    const ivan = await register(panel, 'ivan');
    const added = await add(ivan, { name: 'laptop', publicKey: made('ed25519').line });
    assert.equal(added.statusCode, 201, added.body);
    const id = await userId('ivan');
    const heard: number[] = [];
    const listener = (user: number) => heard.push(user);
    events.on('access-changed', listener);
    try {
      const deleted = await call(admin.headers, 'DELETE', '/api/users/ivan');
      assert.equal(deleted.statusCode, 200, deleted.body);
    } finally {
      events.off('access-changed', listener);
    }
    assert.deepEqual(heard, [id]);
    const left = await panel.db.kysely
      .selectFrom('ssh_keys')
      .select('id')
      .where('user_id', '=', id)
      .execute();
    assert.deepEqual(left, []);
    // A new account of the same name starts without them.
    const again = await register(panel, 'ivan');
    assert.deepEqual(await list(again), []);
  });

  it('gives the SFTP server the keys it signs in with, their use and whether they remain', async () => {
    const service = new SshKeysService({
      keys: new SshKeysRepository(panel.db.kysely),
      confirmIdentity: () => Promise.resolve(),
      events: new PanelEvents(),
      now: () => new Date(clock),
    });
    const judy = await register(panel, 'judy');
    const id = await userId('judy');
    for (const name of ['ed25519', 'rsa2048']) {
      const added = await add(judy, { name, publicKey: made(name).line });
      assert.equal(added.statusCode, 201, added.body);
    }
    const blobOf = (name: string) => Buffer.from(made(name).line.split(' ')[1] ?? '', 'base64');
    const forSignIn = await service.findForSignIn(id);
    assert.deepEqual(
      forSignIn.map((key) => [key.algorithm, key.publicKey.toString('base64')]),
      [
        ['ssh-ed25519', blobOf('ed25519').toString('base64')],
        ['ssh-rsa', blobOf('rsa2048').toString('base64')],
      ],
    );
    // What ssh2's server hands over as the offered key: the same wire blob.
    const parsed = ssh2.utils.parseKey(made('ed25519').line);
    assert.ok(!(parsed instanceof Error));
    const match = await service.matching(id, parsed.getPublicSSH());
    assert.equal(match?.id, forSignIn[0]?.id);
    assert.equal(await service.matching(id, blobOf('ecdsa256')), null);
    assert.equal(await service.matching(await userId('admin'), blobOf('rsa2048')), null);

    const at = new Date(clock + 5_000);
    await service.recordUse(forSignIn[0]!.id, at);
    const shown = (await list(judy)).find((key) => key.id === forSignIn[0]?.id);
    assert.equal(shown?.lastUsedAt, at.toISOString());

    assert.equal(await service.exists(forSignIn[1]!.id), true);
    const deleted = await call(judy.headers, 'DELETE', `/api/profile/ssh-keys/${forSignIn[1]!.id}`);
    assert.equal(deleted.statusCode, 204, deleted.body);
    assert.equal(await service.exists(forSignIn[1]!.id), false);
  });
});

describe('GET /api/sftp', () => {
  let panel: TestPanel;
  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
  });

  it('tells a signed-in user that SFTP is off while no SFTP server runs', async () => {
    const user = await register(panel, 'reader');
    const response = await panel.app.inject({
      method: 'GET',
      url: '/api/sftp',
      headers: user.headers,
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(json<{ data: unknown }>(response).data, {
      enabled: false,
      port: null,
      hostKeyFingerprint: null,
    });
    assertError(await panel.app.inject({ method: 'GET', url: '/api/sftp' }), 401, 'UNAUTHORIZED');
  });
});
