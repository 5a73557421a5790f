/**
 * The accounts as sign-in, the profile and OpenID Connect use them: a port of their own, which
 * the users module's repository (the only code that queries the users table) implements, so that
 * none of these services imports another module's repository.
 */
import type { Role, SignIn, User } from '../../domain/user.js';

export interface Accounts {
  /**
   * Runs `work` holding the accounts lock, for rules that span accounts ("the first one is an
   * admin"); inside, use the `accounts` it is given.
   */
  transaction<T>(work: (accounts: Accounts) => Promise<T>): Promise<T>;
  findById(id: number): Promise<User | undefined>;
  findByUsername(username: string): Promise<User | undefined>;
  findCredentials(
    username: string,
  ): Promise<{ user: User; passwordHash: string | null } | undefined>;
  passwordHash(id: number): Promise<string | null>;
  /** The servers an admin put in the user's list. */
  serverNames(userId: number): Promise<string[]>;
  anyEverRegistered(): Promise<boolean>;
  /** Throws `AlreadyExists` when the name is taken. */
  insert(user: {
    username: string;
    passwordHash: string | null;
    role: Role;
    now: Date;
  }): Promise<User>;
  /** False when the account was deleted meanwhile; throws `AlreadyExists` when the name is taken. */
  rename(id: number, username: string): Promise<boolean>;
  /** The new token version, or `undefined` when the account was deleted meanwhile. */
  setPassword(id: number, passwordHash: string): Promise<number | undefined>;
  recordLogin(id: number, now: Date): Promise<void>;
  findByIdentity(provider: string, subject: string): Promise<User | undefined>;
  linkIdentity(identity: {
    userId: number;
    provider: string;
    subject: string;
    email: string | null;
    now: Date;
  }): Promise<void>;
  signInOf(users: readonly User[]): Promise<Map<number, SignIn>>;
}
