/**
 * User administration: listing, making accounts, roles, passwords, two-factor sign-in, server
 * access and deletion. The caller's right to do each is checked by the route's access policy (or
 * is the operator's, on the command line, which calls this same service); the rules that span
 * users (an admin must remain, names are unique, server names must exist) and what a password
 * change revokes are kept here, once.
 *
 * Set-password links: a link is `<PUBLIC_URL>/set-password#token=<token>`, the token in the
 * fragment so that no server on the way (the panel, a proxy) ever receives or logs it with the
 * page's address. Only the SHA-256 of a token is stored; a link is good for {@link LINK_LIFETIME_MS}
 * and once, and issuing a new one (or setting the password otherwise) ends the earlier ones.
 */
import { createHash, randomBytes } from 'node:crypto';
import { AlreadyExists, NoLongerExists } from '../../domain/conflicts.js';
import { passwordProblem, usernameProblem, type Role, type User } from '../../domain/user.js';
import { AppError, invalidLink, notFound } from '../../errors.js';
import type { PanelEvents } from '../../events.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { PasswordLinksRepository } from './password-links.repository.js';
import type { UserWithServers, UsersRepository } from './users.repository.js';

/** How long a set-password link is good for. */
export const LINK_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Which of some server names exist (the servers domain keeps them). */
export interface ServerDirectory {
  existing(names: readonly string[]): Promise<string[]>;
}

/** A one-time link where a person sets their password. */
export interface SetPasswordLink {
  readonly url: string;
  readonly expiresAt: string;
}

/** A new password, or a link where the person chooses one. */
export type PasswordChange = { readonly password: string } | { readonly link: true };

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Tokens are 256 random bits in base64url: anything else is no token, and is not looked up. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

const invalid = (field: string, problem: string): AppError =>
  new AppError('VALIDATION_FAILED', `${field} ${problem}`, {
    details: [{ path: `body/${field}`, message: problem }],
  });

/** What a UsersService is made from. */
export interface UsersServiceDeps {
  readonly users: UsersRepository;
  readonly links: PasswordLinksRepository;
  readonly servers: ServerDirectory;
  readonly hasher: PasswordHasher;
  /** A password change revokes the user's API keys (the api-keys domain keeps them). */
  readonly apiKeys: { revokeAll(userId: number): Promise<number> };
  /** Two-factor sign-in (the two-factor domain keeps it). */
  readonly secondFactor: { turnOff(user: User): Promise<void> };
  /** Told whenever a user's rights change, so open consoles are re-checked. */
  readonly events: PanelEvents;
  /** Where the panel is reached (PUBLIC_URL, no trailing slash): links point there. */
  readonly publicUrl: string;
  readonly now: () => Date;
}

export class UsersService {
  readonly #deps: UsersServiceDeps;

  constructor(deps: UsersServiceDeps) {
    this.#deps = deps;
  }

  list(): Promise<UserWithServers[]> {
    return this.#deps.users.list();
  }

  /**
   * Makes an account. Without a password it has none until the person sets one with the link
   * answered (null when a password was given).
   */
  async create({
    username,
    role,
    password,
  }: {
    readonly username: string;
    readonly role: Role;
    readonly password?: string | undefined;
  }): Promise<{ user: UserWithServers; setPasswordLink: SetPasswordLink | null }> {
    const { users, now } = this.#deps;
    const problem = usernameProblem(username);
    if (problem !== null) throw invalid('username', problem);
    if (await users.findByUsername(username)) throw usernameTaken();
    const passwordHash = password === undefined ? null : await this.#newPasswordHash(password);
    let user: User;
    try {
      user = await users.insert({ username, passwordHash, role, now: now() });
    } catch (error) {
      if (error instanceof AlreadyExists) throw usernameTaken();
      throw error;
    }
    const setPasswordLink = passwordHash === null ? await this.#issueLink(user.id) : null;
    return { user: await withServers(user, users), setPasswordLink };
  }

  /**
   * Sets the user's password, or takes it away and answers a link where they set a new one.
   * Either way every earlier session token and every API key of the user is revoked, and earlier
   * links end.
   */
  async setPassword(
    username: string,
    change: PasswordChange,
  ): Promise<{
    username: string;
    setPasswordLink: SetPasswordLink | null;
    revokedApiKeys: number;
  }> {
    const { users, links } = this.#deps;
    const user = await this.#find(username);
    const passwordHash = 'password' in change ? await this.#newPasswordHash(change.password) : null;
    // A link takes the old password away: a reset is often made because it leaked.
    if ((await users.setPassword(user.id, passwordHash)) === undefined) throw notFound('User');
    const setPasswordLink = passwordHash === null ? await this.#issueLink(user.id) : null;
    if (passwordHash !== null) await links.deleteAllOf(user.id);
    const revokedApiKeys = await this.#revokeAfterPasswordChange(user.id);
    return { username: user.username, setPasswordLink, revokedApiKeys };
  }

  /**
   * Turns the user's two-factor sign-in off (409 TWO_FACTOR_OFF when it is not on); answers the
   * name as stored.
   */
  async turnOffTwoFactor(username: string): Promise<string> {
    const user = await this.#find(username);
    await this.#deps.secondFactor.turnOff(user);
    return user.username;
  }

  async setRole(username: string, role: Role): Promise<UserWithServers> {
    const { users, events } = this.#deps;
    return users
      .transaction(async (locked) => {
        const user = await this.#find(username, locked);
        if (role !== 'admin') await refuseLastAdmin(user, locked);
        await locked.setRole(user.id, role);
        return withServers({ ...user, role }, locked);
      })
      .then((changed) => {
        events.emit('access-changed', changed.id);
        return changed;
      });
  }

  async setServers(username: string, requested: readonly string[]): Promise<UserWithServers> {
    const { users, servers, events } = this.#deps;
    const names = [...new Set(requested)].sort();
    await this.#find(username); // 404 before 400, for an unknown user
    const known = new Set(await servers.existing(names));
    const unknown = names.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new AppError('UNKNOWN_SERVER', `No such server: ${unknown.join(', ')}`, {
        details: unknown.map((name) => ({ path: '/servers', message: `no server "${name}"` })),
      });
    }
    let user: User;
    try {
      // Under the users lock, so a deletion cannot slip in between the lookup and the write.
      user = await users.transaction(async (locked) => {
        const target = await this.#find(username, locked);
        await locked.replaceServers(target.id, names);
        return target;
      });
    } catch (error) {
      // A server deleted between the check above and the insert.
      if (error instanceof NoLongerExists) {
        throw new AppError('UNKNOWN_SERVER', 'One of those servers no longer exists');
      }
      throw error;
    }
    events.emit('access-changed', user.id);
    return withServers(user, users);
  }

  /** Deletes the user; answers the name they had. */
  async remove(username: string): Promise<string> {
    const { users, links, events, now } = this.#deps;
    const user = await users.transaction(async (locked) => {
      const target = await this.#find(username, locked);
      await refuseLastAdmin(target, locked);
      await locked.markDeleted(target.id, now());
      return target;
    });
    await links.deleteAllOf(user.id);
    events.emit('access-changed', user.id);
    return user.username;
  }

  /** Whose a live link is, and until when (400 INVALID_LINK for any other token). */
  async checkLink(token: string): Promise<{ username: string; expiresAt: string }> {
    const link = await this.#deps.links.findLive(liveLinkHash(token), this.#deps.now());
    if (!link) throw invalidLink();
    return { username: link.username, expiresAt: link.expiresAt };
  }

  /**
   * Uses a live link up: sets its user's password (revoking their tokens and API keys as any
   * password change does) and answers the user as they are now. 400 INVALID_LINK otherwise.
   */
  async redeemLink(token: string, password: string): Promise<User> {
    const { users, links, now } = this.#deps;
    const hash = liveLinkHash(token);
    // Checked before the slow hashing, and the password's rules before the link is used up.
    if (!(await links.findLive(hash, now()))) throw invalidLink();
    const passwordHash = await this.#newPasswordHash(password);
    const userId = await links.take(hash, now());
    if (userId === undefined) throw invalidLink();
    if ((await users.setPassword(userId, passwordHash)) === undefined) throw invalidLink();
    await this.#revokeAfterPasswordChange(userId);
    const user = await users.findById(userId);
    if (!user) throw invalidLink();
    return user;
  }

  /** Inside a transaction, pass its repository: the outer one would wait for the connection. */
  async #find(username: string, repo: UsersRepository = this.#deps.users): Promise<User> {
    const user = await repo.findByUsername(username);
    if (!user) throw notFound('User');
    return user;
  }

  #newPasswordHash(password: string): Promise<string> {
    const problem = passwordProblem(password);
    if (problem !== null) throw invalid('password', problem);
    return this.#deps.hasher.hash(password);
  }

  async #issueLink(userId: number): Promise<SetPasswordLink> {
    const token = randomBytes(32).toString('base64url');
    const createdAt = this.#deps.now();
    const expiresAt = new Date(createdAt.getTime() + LINK_LIFETIME_MS);
    await this.#deps.links.replace({ userId, tokenHash: sha256(token), createdAt, expiresAt });
    return {
      url: `${this.#deps.publicUrl}/set-password#token=${token}`,
      expiresAt: expiresAt.toISOString(),
    };
  }

  /** After the hash changed: what a password change revokes besides the tokens. */
  async #revokeAfterPasswordChange(userId: number): Promise<number> {
    const revoked = await this.#deps.apiKeys.revokeAll(userId);
    this.#deps.events.emit('access-changed', userId);
    return revoked;
  }
}

async function withServers(user: User, repo: UsersRepository): Promise<UserWithServers> {
  return {
    ...user,
    servers: await repo.serverNames(user.id),
    signIn: (await repo.signInOf([user])).get(user.id) ?? {
      hasPassword: user.hasPassword,
      providers: [],
    },
  };
}

async function refuseLastAdmin(user: User, locked: UsersRepository): Promise<void> {
  if (user.role === 'admin' && (await locked.countAdmins()) <= 1) {
    throw new AppError('LAST_ADMIN', 'The last admin cannot be demoted or deleted');
  }
}

function liveLinkHash(token: string): string {
  if (!TOKEN.test(token)) throw invalidLink();
  return sha256(token);
}

const usernameTaken = (): AppError => new AppError('USERNAME_TAKEN', 'That username is taken');
