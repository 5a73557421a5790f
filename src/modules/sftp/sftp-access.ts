/**
 * Who signs in to the SFTP server, and as what (docs/sftp.md, "Signing in").
 *
 * The SSH username is `<panel user>.<server>`, as in Pterodactyl. Both names may hold dots, so
 * the login is split at each dot from the right, and the first split that names an account and a
 * server is taken (`al.ice.mc.survival`: `al.ice.mc` + `survival`, else `al.ice` + `mc.survival`,
 * …). The credential then decides: the account's password (never for an account with two-factor
 * sign-in, whose password alone is not enough anywhere), an API key of that account as the
 * password (its server and permission limits apply), or one of the account's SSH keys.
 *
 * Password and API-key attempts go through the panel's login throttle, counted with the web
 * sign-ins of the same account and address; so do bad key signatures. Offering a key the account
 * does not have is not a failure: clients offer every key they hold. Every sign-in and every
 * failed one is in the audit log (`sftp.login`, `via: sftp`).
 */
import ssh2, { type ParsedKey } from 'ssh2';
import { API_KEY_PREFIX } from '../../domain/api-key.js';
import { can } from '../../domain/policy.js';
import { usernameKey, type User } from '../../domain/user.js';
import { AppError } from '../../errors.js';
import type { NewAuditEntry } from '../../domain/audit.js';
import type { LoginThrottle } from '../auth/login-throttle.js';

/** How a session signed in. */
export type SignInMethod = 'password' | 'api-key' | 'ssh-key';

/** A signed-in session's account, server and credential. */
export interface Grant {
  /** The account as it was at sign-in (narrowed by the API key, for one). */
  readonly user: User;
  readonly server: string;
  readonly method: SignInMethod;
  /** The API key's or SSH key's id and name; null for a password. */
  readonly credentialId: number | null;
  readonly credentialName: string | null;
}

/** An SSH key an account added on its profile, as sign-in needs it. */
export interface StoredSshKey {
  readonly id: number;
  readonly name: string;
  /** `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`… */
  readonly algorithm: string;
  /** The SSH wire blob. */
  readonly publicKey: Buffer;
}

/** The SSH keys of the accounts (src/modules/ssh-keys). */
export interface SshKeyLookup {
  /** The account's key whose public blob is `blob`, if it has one. */
  matching(userId: number, blob: Buffer): Promise<StoredSshKey | null>;
  /** Whether the key still exists (a deleted key ends its sessions). */
  exists(id: number): Promise<boolean>;
  recordUse(id: number, at: Date): Promise<void>;
}

/** What an SftpAccess is made from. */
export interface SftpAccessDeps {
  readonly users: {
    findCredentials(
      username: string,
    ): Promise<{ user: User; passwordHash: string | null } | undefined>;
    findById(id: number): Promise<User | undefined>;
  };
  readonly hasher: {
    verify(hash: string, password: string): Promise<boolean>;
    burn(password: string): Promise<void>;
  };
  readonly throttle: LoginThrottle;
  readonly apiKeys: {
    authenticate(token: string, address: string | null): Promise<User | null>;
    userOfKey(id: number): Promise<User | null>;
  };
  readonly sshKeys: SshKeyLookup;
  readonly serverExists: (name: string) => Promise<boolean>;
  /** Throws (403/404) unless `user` may read the server's files now. */
  readonly requireFiles: (user: User, server: string) => Promise<unknown>;
  /** The account must set up a second factor before it may do anything. */
  readonly mustEnrolSecondFactor: (user: User) => boolean;
  readonly audit: (entry: NewAuditEntry) => Promise<void>;
  readonly now: () => Date;
}

/** How a sign-in attempt ended: a grant, or a refusal (with words for the client, if any). */
export type SignInOutcome =
  | { readonly kind: 'granted'; readonly grant: Grant }
  | { readonly kind: 'refused'; readonly message: string | null };

/** The longest login looked at: a username and a server name, each well under 200 bytes. */
const MAX_LOGIN_LENGTH = 512;

export class SftpAccess {
  readonly #deps: SftpAccessDeps;

  constructor(deps: SftpAccessDeps) {
    this.#deps = deps;
  }

  /**
   * The account and server a login names, or undefined. At most one lookup per dot, from the
   * right; the login's length is bounded first.
   */
  async resolve(login: string): Promise<{ user: User; server: string } | undefined> {
    if (login.length > MAX_LOGIN_LENGTH) return undefined;
    for (let dot = login.lastIndexOf('.'); dot > 0; dot = login.lastIndexOf('.', dot - 1)) {
      const server = login.slice(dot + 1);
      if (server === '') continue;
      const found = await this.#deps.users.findCredentials(login.slice(0, dot));
      if (found && (await this.#deps.serverExists(server))) return { user: found.user, server };
    }
    return undefined;
  }

  /** A password, or an API key given as the password. */
  async password(login: string, password: string, address: string): Promise<SignInOutcome> {
    const { users, hasher, throttle, apiKeys } = this.#deps;
    const target = await this.resolve(login);
    const account = usernameKey(target?.user.username ?? login);
    const byKey = password.startsWith(API_KEY_PREFIX);
    const outcome = await throttle.attempt(account, address, async () => {
      if (byKey) {
        const user = await apiKeys.authenticate(password, address);
        return user !== null && user.id === target?.user.id ? user : null;
      }
      const found = target ? await users.findCredentials(target.user.username) : undefined;
      if (found?.passwordHash == null) {
        await hasher.burn(password);
        return null;
      }
      return (await hasher.verify(found.passwordHash, password)) ? found.user : null;
    });
    if (outcome.kind === 'refused') {
      await this.#failed(login, target, address, 'throttled');
      return refused(`Too many failed sign-ins; try again in ${outcome.retryAfterSeconds} s.`);
    }
    if (outcome.kind === 'wrong' || target === undefined) {
      await this.#failed(login, target, address, 'wrong credentials');
      return refused(null);
    }
    const user = outcome.value;
    if (!byKey && user.twoFactor) {
      await this.#failed(login, target, address, 'two-factor account');
      return refused(
        'This account signs in with two factors: a password alone is refused. Sign in with an ' +
          'SSH key (Profile, SSH keys) or give an API key as the password.',
      );
    }
    const key = user.key;
    return this.#admit(
      { user, server: target.server, method: byKey ? 'api-key' : 'password' },
      key ? { id: key.id, name: key.name } : null,
      address,
    );
  }

  /**
   * Whether the account of `login` has the key `blob`, before the client proves it holds the
   * private half: an unknown key is declined without counting as a failure.
   */
  async hasKey(login: string, blob: Buffer): Promise<boolean> {
    const target = await this.resolve(login);
    return (
      target !== undefined && (await this.#deps.sshKeys.matching(target.user.id, blob)) !== null
    );
  }

  /**
   * A key sign-in: the key must be the account's and `verify` (the signature over the session)
   * must hold. A bad signature counts as a failed sign-in.
   */
  async publicKey(
    login: string,
    blob: Buffer,
    verify: (publicKey: ParsedKey) => boolean,
    address: string,
  ): Promise<SignInOutcome> {
    const { sshKeys, throttle } = this.#deps;
    const target = await this.resolve(login);
    const account = usernameKey(target?.user.username ?? login);
    const outcome = await throttle.attempt(account, address, async () => {
      if (!target) return null;
      const key = await sshKeys.matching(target.user.id, blob);
      if (!key) return null;
      const parsed = ssh2.utils.parseKey(`${key.algorithm} ${key.publicKey.toString('base64')}`);
      if (parsed instanceof Error || Array.isArray(parsed)) return null;
      return verify(parsed) ? key : null;
    });
    if (outcome.kind === 'refused') {
      await this.#failed(login, target, address, 'throttled');
      return refused(`Too many failed sign-ins; try again in ${outcome.retryAfterSeconds} s.`);
    }
    if (outcome.kind === 'wrong' || target === undefined) {
      await this.#failed(login, target, address, 'bad key signature');
      return refused(null);
    }
    await sshKeys.recordUse(outcome.value.id, this.#deps.now());
    return this.#admit(
      { user: target.user, server: target.server, method: 'ssh-key' },
      { id: outcome.value.id, name: outcome.value.name },
      address,
    );
  }

  /**
   * The session's account as it is now, narrowed by its API key; null when the session must end:
   * the account is gone or banned, its password changed (a password session), its key revoked,
   * expired or deleted, or it may no longer read the server's files.
   */
  async current(grant: Grant): Promise<User | null> {
    const { users, apiKeys, sshKeys } = this.#deps;
    let user: User | null | undefined;
    if (grant.method === 'api-key') {
      user = grant.credentialId === null ? null : await apiKeys.userOfKey(grant.credentialId);
    } else {
      user = await users.findById(grant.user.id);
      if (grant.method === 'password' && user?.tokenVersion !== grant.user.tokenVersion) {
        user = null;
      }
      if (grant.method === 'ssh-key') {
        if (grant.credentialId === null || !(await sshKeys.exists(grant.credentialId))) {
          user = null;
        }
      }
    }
    if (!user || !can(user, 'account.use') || this.#deps.mustEnrolSecondFactor(user)) return null;
    try {
      await this.#deps.requireFiles(user, grant.server);
    } catch (error) {
      if (error instanceof AppError) return null;
      throw error;
    }
    return user;
  }

  async #admit(
    granted: Pick<Grant, 'user' | 'server' | 'method'>,
    credential: { id: number; name: string } | null,
    address: string,
  ): Promise<SignInOutcome> {
    const grant: Grant = {
      ...granted,
      credentialId: credential?.id ?? null,
      credentialName: credential?.name ?? null,
    };
    const refusal = await this.#refusal(grant);
    await this.#deps.audit({
      ...entryOf(grant.user.username, grant.user.id, grant.server, address),
      via: 'sftp',
      viaName: grant.credentialName,
      outcome: refusal === null ? 'ok' : 'failed',
      details: { method: grant.method, ...(refusal === null ? {} : { reason: refusal }) },
    });
    return refusal === null ? { kind: 'granted', grant } : refused(refusal);
  }

  /** Why a right credential still may not open a session, in words for the client. */
  async #refusal(grant: Grant): Promise<string | null> {
    const { user, server } = grant;
    if (!can(user, 'account.use')) return 'This account is banned.';
    if (this.#deps.mustEnrolSecondFactor(user)) {
      return 'Set up two-factor sign-in in the panel first: your role requires it.';
    }
    try {
      await this.#deps.requireFiles(user, server);
    } catch (error) {
      if (error instanceof AppError) return `You may not read the files of ${server}.`;
      throw error;
    }
    return null;
  }

  async #failed(
    login: string,
    target: { user: User; server: string } | undefined,
    address: string,
    reason: string,
  ): Promise<void> {
    await this.#deps.audit({
      ...entryOf(login, target?.user.id ?? null, target?.server ?? null, address),
      via: 'sftp',
      viaName: null,
      outcome: 'failed',
      details: { reason },
    });
  }
}

const refused = (message: string | null): SignInOutcome => ({ kind: 'refused', message });

const entryOf = (
  actor: string,
  actorId: number | null,
  server: string | null,
  address: string,
): Omit<NewAuditEntry, 'via' | 'viaName' | 'outcome' | 'details'> => ({
  actorId,
  actor,
  address,
  action: 'sftp.login',
  server,
  target: null,
  status: null,
});
