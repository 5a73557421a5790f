/**
 * Access tokens: JWT signed with HS256, valid for 7 days. A token proves who the caller was when
 * it was issued; what they may do now is read from the database on every request.
 *
 * Tokens are issued with jose. Every authenticated request verifies one, so verification is done
 * here, synchronously, with `node:crypto` and a key made once, and accepts exactly:
 * - three base64url segments in their canonical encoding (no padding, no stray characters);
 * - a header that is a JSON object holding `alg: "HS256"` and at most `typ: "JWT"` besides: no
 *   `none`, no other algorithm, no `crit` or any other parameter, so no public-key confusion;
 * - an HMAC-SHA-256 of `header.payload` under the panel's secret, compared in constant time;
 * - claims that are a JSON object with `iss` and `aud` (a string, or an array holding it) of the
 *   panel, numeric `iat`, `exp` in the future, `nbf` (if present) not in the future, `sub` a
 *   positive 32-bit integer in decimal and `ver` an integer.
 * These are the rules jose applied with the options the panel gave it, made stricter where jose
 * was lenient (`sub` spelled `01` or `1e3`, other header parameters).
 */
import { Buffer } from 'node:buffer';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { SignJWT } from 'jose';

export const TOKEN_LIFETIME_SECONDS = 7 * 24 * 60 * 60;
const ALGORITHM = 'HS256';
const TYPE = 'JWT';
const ISSUER = 'game-panel';
const AUDIENCE = 'game-panel:api';
const MAX_USER_ID = 2_147_483_647;
/** HMAC-SHA-256 output. */
const SIGNATURE_BYTES = 32;
/** The header segment of every token the panel issues (jose writes the header as given). */
const ISSUED_HEADER = Buffer.from(JSON.stringify({ alg: ALGORITHM, typ: TYPE })).toString(
  'base64url',
);
/** A user id as issued: decimal, no sign, no leading zero, at most 10 digits (range checked). */
const USER_ID = /^[1-9][0-9]{0,9}$/;

export interface TokenClaims {
  readonly userId: number;
  /** The user's `token_version` when the token was issued; a password change bumps it. */
  readonly version: number;
}

/** The claims of a valid token, and when it was issued (Unix seconds): when its user signed in. */
export interface VerifiedClaims extends TokenClaims {
  readonly issuedAt: number;
}

/** Issues and verifies the panel's session tokens (HS256 JWTs) under one secret and clock. */
export class TokenService {
  readonly #now: () => Date;
  readonly #key: KeyObject;
  /** jose signs through WebCrypto, which wants its own key object; imported once. */
  readonly #signingKey: ReturnType<typeof crypto.subtle.importKey>;

  constructor(secret: Uint8Array, now: () => Date) {
    this.#now = now;
    this.#key = createSecretKey(secret);
    this.#signingKey = crypto.subtle.importKey(
      'raw',
      secret,
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    );
  }

  async issue({ userId, version }: TokenClaims): Promise<string> {
    const issuedAt = this.#seconds();
    return new SignJWT({ ver: version })
      .setProtectedHeader({ alg: ALGORITHM, typ: TYPE })
      .setSubject(String(userId))
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
      .sign(await this.#signingKey);
  }

  /** The claims of a valid token; `null` for anything else (bad signature, expired, malformed). */
  verify(token: string): VerifiedClaims | null {
    const [encodedHeader = '', encodedPayload, encodedSignature, ...rest] = token.split('.');
    if (encodedPayload === undefined || encodedSignature === undefined || rest.length > 0) {
      return null;
    }
    // The panel's own header is known to be good; any other is read and checked.
    if (encodedHeader !== ISSUED_HEADER && !isHs256Header(decodeJson(encodedHeader))) {
      return null;
    }
    const claims = decodeJson(encodedPayload);
    if (claims === null) return null;
    // Both segments are plain base64url now (ASCII), so the signed text is exactly their bytes.
    const signature = decodeSegment(encodedSignature);
    if (signature?.length !== SIGNATURE_BYTES) return null;
    const expected = createHmac('sha256', this.#key)
      .update(`${encodedHeader}.${encodedPayload}`)
      .digest();
    if (!timingSafeEqual(signature, expected)) return null;
    return validClaims(claims, this.#seconds());
  }

  #seconds(): number {
    return Math.floor(this.#now().getTime() / 1000);
  }
}

/**
 * The bytes of one base64url segment, or `null` unless it is in canonical form: Node's decoder
 * skips characters outside the alphabet and ignores stray bits, so the bytes must encode back to
 * exactly the same text.
 */
function decodeSegment(text: string): Buffer | null {
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON object a segment encodes; `null` for bad base64url, UTF-8 or JSON, or a non-object. */
function decodeJson(text: string): Record<string, unknown> | null {
  const bytes = decodeSegment(text);
  if (bytes === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(bytes));
  } catch {
    return null;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** `{"alg":"HS256"}`, with `"typ":"JWT"` allowed, and nothing else. */
function isHs256Header(header: Record<string, unknown> | null): boolean {
  if (header?.alg !== ALGORITHM) return false;
  for (const name of Object.keys(header)) {
    if (name !== 'alg' && (name !== 'typ' || header.typ !== TYPE)) return false;
  }
  return true;
}

function validClaims(claims: Record<string, unknown>, now: number): VerifiedClaims | null {
  const { iss, aud, sub, iat, exp, nbf, ver } = claims;
  if (iss !== ISSUER) return null;
  if (aud !== AUDIENCE && !(Array.isArray(aud) && aud.includes(AUDIENCE))) return null;
  if (!isNumericDate(iat) || !isNumericDate(exp) || exp <= now) return null;
  if (nbf !== undefined && (!isNumericDate(nbf) || nbf > now)) return null;
  // Ids are 32-bit integers in the database; anything else names no user.
  if (typeof sub !== 'string' || !USER_ID.test(sub)) return null;
  const userId = Number(sub);
  if (userId > MAX_USER_ID) return null;
  if (typeof ver !== 'number' || !Number.isSafeInteger(ver)) return null;
  return { userId, version: ver, issuedAt: iat };
}

const isNumericDate = (value: unknown): value is number =>
  typeof value === 'number' && Number.isFinite(value);
