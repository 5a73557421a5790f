/**
 * Token verification is written by hand (`node:crypto`, synchronous), so every rule it enforces
 * is checked here: first on the token service itself, on a clock the test sets, with tokens
 * signed with the right secret over exactly the text under test (a rule that is missing lets
 * such a token through); then through the API for the rules that a lookup by id would not catch.
 */
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { createHmac } from 'node:crypto';
import { before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { TOKEN_LIFETIME_SECONDS, TokenService } from '../src/modules/auth/tokens.js';
import { TEST_JWT_SECRET, startPanel, suiteScope, type TestPanel } from './helpers/app.js';
import { assertError, bearer, register } from './helpers/factories.js';

const SECRET = new TextEncoder().encode('the secret of these tests, long enough for HS256');
const OTHER_SECRET = new TextEncoder().encode('another secret of these tests, also long enough');
/** The test's clock, in seconds. */
const NOW = Date.parse('2030-01-01T00:00:00Z') / 1000;

const HEADER = { alg: 'HS256', typ: 'JWT' };
const CLAIMS = {
  ver: 3,
  sub: '42',
  iss: 'game-panel',
  aud: 'game-panel:api',
  iat: NOW - 60,
  exp: NOW + 3600,
};

const b64 = (text: string): string => Buffer.from(text).toString('base64url');

/** `header.payload.signature`, HS256 over exactly the two segments given, with `key`. */
function signSegments(header: string, payload: string, key: Uint8Array = SECRET): string {
  const input = `${header}.${payload}`;
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`;
}

/** A token with this header and these claims (each as JSON), signed with `key`. */
const sign = (header: unknown, claims: unknown, key: Uint8Array = SECRET): string =>
  signSegments(b64(JSON.stringify(header)), b64(JSON.stringify(claims)), key);

/** The panel's claims with `changes` applied; `undefined` removes a claim. */
const claims = (changes: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries<unknown>({ ...CLAIMS, ...changes }).filter(([, value]) => value !== undefined),
  );

describe('token verification', () => {
  let clock = NOW;
  const tokens = new TokenService(SECRET, () => new Date(clock * 1000));
  const verify = (token: string) => tokens.verify(token);
  const refused = (token: string, why: string) => {
    assert.equal(verify(token), null, `accepted ${why}`);
  };

  it('accepts its own tokens until they expire', async () => {
    clock = NOW;
    const token = await tokens.issue({ userId: 7, version: 2 });
    assert.deepEqual(verify(token), { userId: 7, version: 2, issuedAt: NOW });
    clock = NOW + TOKEN_LIFETIME_SECONDS - 1;
    assert.deepEqual(verify(token), { userId: 7, version: 2, issuedAt: NOW });
    clock = NOW + TOKEN_LIFETIME_SECONDS;
    refused(token, 'an expired token');
    clock = NOW;
  });

  it('accepts tokens signed by jose with the same secret, with or without typ', async () => {
    const jose = (header: { alg: string; typ?: string }) =>
      new SignJWT({ ver: 0 })
        .setProtectedHeader(header)
        .setSubject('9')
        .setIssuer('game-panel')
        .setAudience('game-panel:api')
        .setIssuedAt(NOW - 10)
        .setExpirationTime(NOW + 10)
        .sign(SECRET);
    const signed = { userId: 9, version: 0, issuedAt: NOW - 10 };
    assert.deepEqual(verify(await jose({ alg: 'HS256' })), signed);
    assert.deepEqual(verify(await jose({ alg: 'HS256', typ: 'JWT' })), signed);
    // The tokens below differ from this one in one thing only.
    assert.deepEqual(verify(sign(HEADER, CLAIMS)), { userId: 42, version: 3, issuedAt: NOW - 60 });
  });

  it('refuses a signature that is not the HMAC of the text under the secret', () => {
    const token = sign(HEADER, CLAIMS);
    const [header, payload, signature = ''] = token.split('.');
    refused(sign(HEADER, CLAIMS, OTHER_SECRET), 'another secret');
    refused(`${header}.${payload}.${sign(HEADER, claims({ ver: 4 })).split('.')[2]}`, 'a swap');
    refused(`${header}.${b64(JSON.stringify(claims({ sub: '1' })))}.${signature}`, 'a new sub');
    refused(`${b64(JSON.stringify({ alg: 'HS256' }))}.${payload}.${signature}`, 'a new header');
    refused(`${header}.${payload}.${signature.slice(0, -1)}`, 'a cut signature');
    refused(`${header}.${payload}.${signature}A`, 'a longer signature');
    refused(`${header}.${payload}.`, 'no signature');
    // The same 32 bytes spelled differently: the last character carries 2 unused bits.
    const last = signature.at(-1) ?? '';
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const respelled = `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(last) + 1] ?? ''}`;
    assert.deepEqual(Buffer.from(respelled, 'base64url'), Buffer.from(signature, 'base64url'));
    refused(`${header}.${payload}.${respelled}`, 'a non-canonical spelling');
  });

  it('refuses every algorithm but HS256, whatever the signature', () => {
    for (const alg of ['none', 'HS512', 'HS384', 'RS256', 'hs256', '', undefined, ['HS256']]) {
      refused(sign({ ...HEADER, alg }, CLAIMS), `alg ${JSON.stringify(alg)}`);
    }
    const none = b64(JSON.stringify({ alg: 'none', typ: 'JWT' }));
    const payload = b64(JSON.stringify(CLAIMS));
    refused(`${none}.${payload}.`, 'alg none, empty signature');
    refused(`${none}.${payload}`, 'alg none, no signature segment');
  });

  it('refuses crit and every header parameter but alg and typ', () => {
    refused(sign({ ...HEADER, crit: ['exp'], exp: NOW + 60 }, CLAIMS), 'crit');
    refused(sign({ ...HEADER, crit: ['b64'], b64: false }, CLAIMS), 'b64');
    refused(sign({ ...HEADER, kid: 'a' }, CLAIMS), 'kid');
    refused(sign({ ...HEADER, jku: 'https://example.com/keys' }, CLAIMS), 'jku');
    refused(sign({ ...HEADER, typ: 'at+jwt' }, CLAIMS), 'another typ');
    refused(sign({ ...HEADER, typ: null }, CLAIMS), 'typ null');
    for (const header of ['HS256', ['HS256'], null, 1]) {
      refused(sign(header, CLAIMS), `header ${JSON.stringify(header)}`);
    }
  });

  it('refuses segments that are not canonical base64url', () => {
    const header = b64(JSON.stringify(HEADER));
    const payload = b64(JSON.stringify(CLAIMS));
    // Each is signed over its exact text, so only the encoding rule can refuse it.
    refused(signSegments(header, `${payload}=`), 'padding');
    const base64 = Buffer.from(JSON.stringify(claims({ note: '~~~' }))).toString('base64');
    assert.match(base64, /\+/);
    refused(signSegments(header, base64), 'base64 with + and padding');
    refused(signSegments(header, base64.replace(/=+$/, '')), 'base64 with +');
    refused(signSegments(header, `${payload.slice(0, 10)}*${payload.slice(10)}`), 'a stray *');
    refused(signSegments(header, `${payload.slice(0, 10)} ${payload.slice(10)}`), 'a space');
    refused(signSegments(`${header}=`, payload), 'padding in the header');
    refused(signSegments(`${header}.`, payload), 'an empty segment');
    refused(`${signSegments(header, payload)}.`, 'four segments');
    refused(header, 'one segment');
    refused('', 'nothing');
  });

  it('refuses claims that are not a JSON object in UTF-8', () => {
    const header = b64(JSON.stringify(HEADER));
    for (const text of ['[1]', '"claims"', '42', 'null', 'true', '{"sub":"42"', 'not json', '']) {
      refused(signSegments(header, b64(text)), `claims ${text}`);
    }
    const badUtf8 = Buffer.concat([
      Buffer.from(JSON.stringify(CLAIMS).slice(0, -1)),
      Buffer.from(',"x":"\xff"}', 'latin1'),
    ]).toString('base64url');
    refused(signSegments(header, badUtf8), 'invalid UTF-8');
  });

  it('refuses another issuer or audience', () => {
    refused(sign(HEADER, claims({ iss: 'another-panel' })), 'another iss');
    refused(sign(HEADER, claims({ iss: undefined })), 'no iss');
    refused(sign(HEADER, claims({ aud: 'game-panel:other' })), 'another aud');
    refused(sign(HEADER, claims({ aud: ['game-panel:other'] })), 'an aud list without ours');
    refused(sign(HEADER, claims({ aud: undefined })), 'no aud');
    // As jose accepted: a list of audiences holding the panel's.
    assert.deepEqual(verify(sign(HEADER, claims({ aud: ['x', 'game-panel:api'] }))), {
      userId: 42,
      version: 3,
      issuedAt: NOW - 60,
    });
  });

  it('refuses tokens outside their validity, on the injected clock', () => {
    clock = NOW;
    refused(sign(HEADER, claims({ exp: NOW })), 'exp now');
    refused(sign(HEADER, claims({ exp: NOW - 1 })), 'exp past');
    refused(sign(HEADER, claims({ exp: undefined })), 'no exp');
    refused(sign(HEADER, claims({ exp: String(NOW + 60) })), 'exp as text');
    refused(sign(HEADER, claims({ iat: undefined })), 'no iat');
    refused(sign(HEADER, claims({ iat: String(NOW) })), 'iat as text');
    refused(sign(HEADER, claims({ nbf: NOW + 1 })), 'nbf in the future');
    refused(sign(HEADER, claims({ nbf: String(NOW) })), 'nbf as text');
    assert.notEqual(verify(sign(HEADER, claims({ exp: NOW + 1, nbf: NOW }))), null);
  });

  it('refuses a sub that is not a positive 32-bit integer, as issued', () => {
    for (const sub of ['0', '-1', '2147483648', '9007199254740993', '01', ' 42', '42 ', '+42']) {
      refused(sign(HEADER, claims({ sub })), `sub ${sub}`);
    }
    for (const sub of ['1e3', '0x2a', '42.0', '', 42, null, undefined]) {
      refused(sign(HEADER, claims({ sub })), `sub ${JSON.stringify(sub)}`);
    }
    assert.deepEqual(verify(sign(HEADER, claims({ sub: '2147483647' }))), {
      userId: 2147483647,
      version: 3,
      issuedAt: NOW - 60,
    });
  });

  it('refuses a ver that is not an integer', () => {
    for (const ver of [undefined, '3', 1.5, 2 ** 53, null]) {
      refused(sign(HEADER, claims({ ver })), `ver ${JSON.stringify(ver)}`);
    }
    assert.deepEqual(verify(sign(HEADER, claims({ ver: 0 }))), {
      userId: 42,
      version: 0,
      issuedAt: NOW - 60,
    });
  });
});

describe('token verification through the API', () => {
  let panel: TestPanel;
  let userId: string;
  const secret = new TextEncoder().encode(TEST_JWT_SECRET);
  const me = (token: string) => panel.app.inject({ url: '/api/auth/me', headers: bearer(token) });
  const forge = (header: unknown, changes: Record<string, unknown>) => {
    const now = Math.floor(Date.now() / 1000);
    return sign(
      header,
      { ...claims({ iat: now, exp: now + 60, ver: 0, sub: userId }), ...changes },
      secret,
    );
  };

  const suite = suiteScope();
  before(async () => {
    panel = await startPanel(suite);
    const user = await register(panel, 'holder');
    const payload = user.token.split('.')[1] ?? '';
    userId = (JSON.parse(Buffer.from(payload, 'base64url').toString()) as { sub: string }).sub;
  });

  it('answers a token forged the same way with the right claims', async () => {
    assert.equal((await me(forge(HEADER, {}))).statusCode, 200);
  });

  it('refuses a header naming HS512 over an HS256 signature of the right secret', async () => {
    assertError(await me(forge({ alg: 'HS512', typ: 'JWT' }, {})), 401, 'UNAUTHORIZED');
  });

  it('refuses the user id spelled otherwise than it was issued', async () => {
    for (const sub of [`0${userId}`, ` ${userId}`, `${userId}.0`, Number(userId)]) {
      assertError(await me(forge(HEADER, { sub })), 401, 'UNAUTHORIZED');
    }
  });

  it('refuses an id beyond 32 bits before the database sees it (PostgreSQL fails)', async () => {
    for (const sub of ['2147483648', '99999999999']) {
      assertError(await me(forge(HEADER, { sub })), 401, 'UNAUTHORIZED');
    }
  });
});
