/**
 * Access tokens: JWT signed with HS256, valid for 7 days. Verification accepts HS256 only (no
 * `none`, no other HMAC size, no public-key confusion) and requires `sub`, `iat`, `exp` and `ver`.
 * A token proves who the caller was when it was issued; what they may do now is read from the
 * database on every request.
 */
import { SignJWT, jwtVerify } from 'jose';

export const TOKEN_LIFETIME_SECONDS = 7 * 24 * 60 * 60;
const ALGORITHM = 'HS256';
const ISSUER = 'game-panel';
const AUDIENCE = 'game-panel:api';
const MAX_USER_ID = 2_147_483_647;

export interface TokenClaims {
  readonly userId: number;
  /** The user's `token_version` when the token was issued; a password change bumps it. */
  readonly version: number;
}

export interface TokenService {
  issue(claims: TokenClaims): Promise<string>;
  /** The claims of a valid token; `null` for anything else (bad signature, expired, malformed). */
  verify(token: string): Promise<TokenClaims | null>;
}

export function createTokenService(secret: Uint8Array, now: () => Date): TokenService {
  const seconds = (): number => Math.floor(now().getTime() / 1000);
  // Imported once: given the raw bytes, jose would import the key again for every token.
  const key = crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
    'verify',
  ]);
  return {
    async issue({ userId, version }) {
      const issuedAt = seconds();
      return new SignJWT({ ver: version })
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setSubject(String(userId))
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + TOKEN_LIFETIME_SECONDS)
        .sign(await key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, await key, {
          algorithms: [ALGORITHM],
          issuer: ISSUER,
          audience: AUDIENCE,
          requiredClaims: ['sub', 'iat', 'exp'],
          currentDate: now(),
        });
        const userId = Number(payload.sub);
        const version = payload.ver;
        // Ids are 32-bit integers in the database; anything else names no user.
        if (!Number.isSafeInteger(userId) || userId <= 0 || userId > MAX_USER_ID) return null;
        if (typeof version !== 'number' || !Number.isSafeInteger(version)) return null;
        return { userId, version };
      } catch {
        return null;
      }
    },
  };
}
