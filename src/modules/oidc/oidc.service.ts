/**
 * Sign-in through OpenID Connect providers: the authorization code flow with PKCE (S256), state
 * and nonce, through openid-client. The pending sign-in lives in a short-lived, encrypted,
 * HttpOnly cookie bound to the browser and is usable once. The callback checks state, issuer
 * (RFC 9207 `iss` when sent), audience, signature and nonce, then links the account by
 * (provider, subject), never by e-mail. The browser is sent back with the panel's own token in
 * the URL fragment, or `#error=<code>`; never a stack or a provider secret.
 */
import { createHash } from 'node:crypto';
import { EncryptJWT, jwtDecrypt } from 'jose';
import * as client from 'openid-client';
import type { OidcProviderConfig } from '../../config.js';
import { AlreadyExists } from '../../domain/conflicts.js';
import { AppError, notFound } from '../../errors.js';
import type { AuthService } from '../auth/auth.service.js';
import type { User } from '../../domain/user.js';
import type { Logger } from '../../log.js';
import type { Accounts } from '../auth/accounts.js';

/** How long a started sign-in may take before it must be started again. */
export const PENDING_TTL_SECONDS = 600;
/** A failed discovery is retried at the next sign-in, but not more often than this. */
const DISCOVERY_RETRY_MS = 5_000;
const DISCOVERY_TIMEOUT_SECONDS = 10;

/** What goes wrong, as the short code put in `#error=`. */
export type SignInError =
  | 'invalid_state'
  | 'access_denied'
  | 'login_failed'
  | 'registration_closed'
  | 'provider_unavailable';

interface Pending {
  readonly provider: string;
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  readonly redirect: string;
}

export interface ProviderView {
  readonly id: string;
  readonly name: string;
  readonly loginUrl: string;
}

/** What an OidcService is made from. */
export interface OidcServiceDeps {
  readonly providers: readonly OidcProviderConfig[];
  readonly publicUrl: string;
  readonly redirectAllowlist: readonly string[];
  readonly secret: Uint8Array;
  readonly users: Accounts;
  readonly auth: AuthService;
  /**
   * Whether an account may be made now beyond the first: OpenID Connect never makes the
   * first account (it would not be an admin), so the first-account exception is not its own.
   */
  readonly registrationOpen: () => Promise<boolean>;
  readonly now: () => Date;
  readonly log: Logger;
}

export class OidcService {
  readonly #discovered = new Map<
    string,
    { config?: Promise<client.Configuration>; failedAt?: number }
  >();
  readonly #usedStates = new Map<string, number>();
  readonly #cookieKey: Uint8Array;
  readonly #deps: OidcServiceDeps;

  constructor(deps: OidcServiceDeps) {
    this.#deps = deps;

    // Its own key, derived from the panel's secret, so a state cookie is never a valid token.
    this.#cookieKey = new Uint8Array(
      createHash('sha256').update(deps.secret).update('game-panel:oidc-state').digest(),
    );
  }

  list(): ProviderView[] {
    return this.#deps.providers.map((provider) => ({
      id: provider.id,
      name: provider.name,
      loginUrl: `${this.#deps.publicUrl}/api/auth/oidc/${provider.id}/login`,
    }));
  }

  /** Discovers every provider in the background, so the first sign-in is quick. */
  warmUp(): void {
    for (const provider of this.#deps.providers) {
      this.#configuration(provider).catch(() => undefined);
    }
  }

  /**
   * Starts a sign-in: where to send the browser, and the sealed pending state for its cookie.
   * 404 for an unknown provider, 400 for a redirect target outside the allowlist, 503 when the
   * provider cannot be reached.
   */
  async begin(
    providerId: string,
    redirect: string | undefined,
  ): Promise<{ location: string; cookie: string }> {
    const provider = this.#provider(providerId);
    const target = this.checkRedirect(redirect);
    let config: client.Configuration;
    try {
      config = await this.#configuration(provider);
    } catch {
      throw new AppError(
        'PROVIDER_UNAVAILABLE',
        `${provider.name} cannot be reached right now; try again later`,
      );
    }
    const pending: Pending = {
      provider: provider.id,
      state: client.randomState(),
      nonce: client.randomNonce(),
      verifier: client.randomPKCECodeVerifier(),
      redirect: target,
    };
    const location = client.buildAuthorizationUrl(config, {
      redirect_uri: this.#callbackUrl(provider),
      scope: provider.scopes.join(' '),
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(pending.verifier),
      code_challenge_method: 'S256',
    });
    return { location: location.href, cookie: await this.#seal(pending) };
  }

  /**
   * Finishes a sign-in from the provider's redirect (`callbackUrl`, the full URL the browser
   * asked for) and the browser's cookie. Always answers where to send the browser: the target
   * with the token, or with `#error=`.
   */
  async finish(providerId: string, callbackUrl: URL, cookie: string | undefined): Promise<string> {
    const fallback = this.checkRedirect(undefined);
    const pending = cookie === undefined ? null : await this.#unseal(cookie);
    if (pending?.provider !== providerId) return withError(fallback, 'invalid_state');
    const provider = this.#deps.providers.find((p) => p.id === providerId);
    if (!provider) return withError(fallback, 'invalid_state');
    const target = pending.redirect;

    if (callbackUrl.searchParams.get('state') !== pending.state || !this.#useOnce(pending.state)) {
      return withError(target, 'invalid_state');
    }
    if (callbackUrl.searchParams.has('error')) return withError(target, 'access_denied');

    let claims: client.IDToken;
    try {
      const config = await this.#configuration(provider);
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims();
      if (!idClaims) return withError(target, 'login_failed');
      claims = await this.#withUserInfo(config, tokens.access_token, idClaims);
    } catch (error) {
      this.#deps.log.warn(
        { provider: provider.id, reason: error instanceof Error ? error.message : 'unknown' },
        'OpenID Connect sign-in refused',
      );
      return withError(target, 'login_failed');
    }

    const user = await this.#account(provider, claims);
    if (user === 'registration_closed') return withError(target, 'registration_closed');
    await this.#deps.users.recordLogin(user.id, this.#deps.now());
    const token = await this.#deps.auth.tokenResponse(user);
    const fragment = new URLSearchParams({
      access_token: token.access_token,
      token_type: token.token_type,
      username: token.username,
      role: token.role,
    });
    return `${target}#${fragment.toString()}`;
  }

  /**
   * The redirect target, checked against the allowlist by its parsed origin; unset: the panel's
   * own address. Relative targets are resolved against PUBLIC_URL the way a browser would, so
   * `//evil.example` and `/\evil.example` resolve to evil.example and are refused.
   */
  checkRedirect(redirect: string | undefined): string {
    if (redirect === undefined || redirect === '') return `${this.#deps.publicUrl}/`;
    // No real target needs a backslash, a control character or an encoded slash; a front end
    // that decodes its path once more could turn any of them into a way off the origin.
    // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
    if (/[\\\u0000-\u001f\u007f]|%2f|%5c/i.test(redirect)) throw invalidRedirect();
    let url: URL;
    try {
      url = new URL(redirect, `${this.#deps.publicUrl}/`);
    } catch {
      throw invalidRedirect();
    }
    const allowed =
      (url.protocol === 'https:' || url.protocol === 'http:') &&
      url.username === '' &&
      url.password === '' &&
      this.#deps.redirectAllowlist.includes(url.origin);
    if (!allowed) throw invalidRedirect();
    url.hash = '';
    return url.href;
  }

  /** The linked account, or a new `user` named after `preferred_username`. */
  async #account(
    provider: OidcProviderConfig,
    claims: client.IDToken,
  ): Promise<User | 'registration_closed'> {
    const linked = await this.#deps.users.findByIdentity(provider.id, claims.sub);
    if (linked) return linked;
    if (!(await this.#deps.registrationOpen())) return 'registration_closed';
    const email = typeof claims.email === 'string' ? claims.email : null;
    const base = baseUsername(claims);
    for (let attempt = 0; attempt < 50; attempt++) {
      const username = attempt === 0 ? base : `${base.slice(0, 28)}${attempt + 1}`;
      try {
        return await this.#deps.users.transaction(async (locked) => {
          // Another sign-in of the same person may have created the account meanwhile.
          const existing = await locked.findByIdentity(provider.id, claims.sub);
          if (existing) return existing;
          const user = await locked.insert({
            username,
            passwordHash: null,
            role: 'user',
            now: this.#deps.now(),
          });
          await locked.linkIdentity({
            userId: user.id,
            provider: provider.id,
            subject: claims.sub,
            email,
            now: this.#deps.now(),
          });
          return user;
        });
      } catch (error) {
        if (!(error instanceof AlreadyExists)) throw error;
        const raced = await this.#deps.users.findByIdentity(provider.id, claims.sub);
        if (raced) return raced;
      }
    }
    throw new Error('Could not find a free username');
  }

  /**
   * Conformant providers put profile claims (preferred_username, email) in the UserInfo response
   * rather than the ID token; fetch them when the ID token lacks them. The response must name
   * the ID token's subject, or it is ignored.
   */
  async #withUserInfo(
    config: client.Configuration,
    accessToken: string,
    claims: client.IDToken,
  ): Promise<client.IDToken> {
    if (typeof claims.preferred_username === 'string') return claims;
    if (config.serverMetadata().userinfo_endpoint === undefined) return claims;
    try {
      const info = await client.fetchUserInfo(config, accessToken, claims.sub);
      return { ...info, ...claims };
    } catch {
      return claims;
    }
  }

  #provider(id: string): OidcProviderConfig {
    const provider = this.#deps.providers.find((p) => p.id === id);
    if (!provider) throw notFound('Sign-in provider');
    return provider;
  }

  #callbackUrl(provider: OidcProviderConfig): string {
    return `${this.#deps.publicUrl}/api/auth/oidc/${provider.id}/callback`;
  }

  /** The provider's discovered configuration, cached; a failure is forgotten after 5 s. */
  #configuration(provider: OidcProviderConfig): Promise<client.Configuration> {
    const cached = this.#discovered.get(provider.id);
    if (cached?.config) return cached.config;
    if (
      cached?.failedAt !== undefined &&
      this.#deps.now().getTime() - cached.failedAt < DISCOVERY_RETRY_MS
    ) {
      return Promise.reject(new Error('discovery failed recently'));
    }
    const issuer = new URL(provider.issuer);
    const insecure = issuer.protocol === 'http:';
    const config = client
      .discovery(
        issuer,
        provider.clientId,
        { client_secret: provider.clientSecret },
        client.ClientSecretBasic(provider.clientSecret),
        {
          timeout: DISCOVERY_TIMEOUT_SECONDS,
          // Plain http is accepted only for loopback issuers (config.ts refuses any other).
          // eslint-disable-next-line @typescript-eslint/no-deprecated -- deprecated only to stand out; needed for a provider on this machine
          ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
        },
      )
      .catch((error: unknown) => {
        this.#deps.log.warn(
          { provider: provider.id, reason: error instanceof Error ? error.message : 'unknown' },
          'OpenID Connect discovery failed',
        );
        this.#discovered.set(provider.id, { failedAt: this.#deps.now().getTime() });
        throw error;
      });
    this.#discovered.set(provider.id, { config });
    return config;
  }

  /** True the first time a state is presented; a replay within its lifetime is refused. */
  #useOnce(state: string): boolean {
    const now = this.#deps.now().getTime();
    for (const [used, expires] of this.#usedStates)
      if (expires < now) this.#usedStates.delete(used);
    if (this.#usedStates.has(state)) return false;
    this.#usedStates.set(state, now + PENDING_TTL_SECONDS * 1000);
    return true;
  }

  async #seal(pending: Pending): Promise<string> {
    return new EncryptJWT({ ...pending })
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM' })
      .setIssuedAt()
      .setExpirationTime(`${PENDING_TTL_SECONDS}s`)
      .encrypt(this.#cookieKey);
  }

  async #unseal(cookie: string): Promise<Pending | null> {
    try {
      const { payload } = await jwtDecrypt(cookie, this.#cookieKey, {
        keyManagementAlgorithms: ['dir'],
        contentEncryptionAlgorithms: ['A256GCM'],
      });
      const { provider, state, nonce, verifier, redirect } = payload;
      if (
        typeof provider !== 'string' ||
        typeof state !== 'string' ||
        typeof nonce !== 'string' ||
        typeof verifier !== 'string' ||
        typeof redirect !== 'string'
      ) {
        return null;
      }
      return { provider, state, nonce, verifier, redirect };
    } catch {
      return null;
    }
  }
}

const invalidRedirect = (): AppError =>
  new AppError('INVALID_REDIRECT', 'That redirect target is not allowed');

const withError = (target: string, code: SignInError): string =>
  `${target}#${new URLSearchParams({ error: code }).toString()}`;

/** A valid username (3 to 32 of A-Z a-z 0-9 _ . -) from the provider's claims. */
function baseUsername(claims: client.IDToken): string {
  const candidates = [claims.preferred_username, claims.nickname, claims.name];
  const email = claims.email;
  if (typeof email === 'string') candidates.push(email.split('@')[0]);
  for (const candidate of candidates) {
    if (typeof candidate !== 'string') continue;
    const cleaned = candidate
      .normalize('NFKD')
      .replace(/[^A-Za-z0-9_.-]/g, '')
      .slice(0, 30);
    if (cleaned.length >= 3) return cleaned;
  }
  return 'player';
}
