/** A panel account and its role: what every part of the panel knows of a user. */
import type { KeyScope } from './api-key.js';

export type Role = 'admin' | 'user' | 'support' | 'banned';
export const ROLES: readonly Role[] = ['admin', 'user', 'support', 'banned'];

export interface User {
  readonly id: number;
  readonly username: string;
  readonly role: Role;
  readonly tokenVersion: number;
  readonly createdAt: string;
  readonly lastLoginAt: string | null;
  /** False for an account made by an OpenID Connect sign-in that never set a password. */
  readonly hasPassword: boolean;
  /** Password sign-in asks for a TOTP code too. */
  readonly twoFactor: boolean;
  /** Set when the request was made with an API key: what the key narrows the user to. */
  readonly key?: KeyScope | undefined;
  /** Set when the request was made with a session token: when that token was issued. */
  readonly signedInAt?: Date | undefined;
}

/** How an account can sign in: with a password, and through which providers. */
export interface SignIn {
  readonly hasPassword: boolean;
  readonly providers: readonly string[];
}

/** Usernames are unique regardless of case: "Steve" and "steve" are the same account name. */
export const usernameKey = (username: string): string => username.toLowerCase();

/**
 * What a new account's name must be: the one rule registration, an admin and the command line
 * all apply (the HTTP schemas are built from it).
 */
export const USERNAME_RULES = {
  minLength: 3,
  maxLength: 32,
  pattern: '^[A-Za-z0-9_.-]+$',
} as const;
/** What a new password must be, wherever it is set (lengths in characters). */
export const PASSWORD_RULES = { minLength: 6, maxLength: 1024 } as const;

/** Why `username` cannot name a new account, or null when it can. */
export function usernameProblem(username: string): string | null {
  const { minLength, maxLength, pattern } = USERNAME_RULES;
  if (username.length < minLength || username.length > maxLength) {
    return `must be ${minLength} to ${maxLength} characters`;
  }
  if (!new RegExp(pattern).test(username)) return 'may hold only A-Z a-z 0-9 _ . -';
  return null;
}

/** Why `password` cannot be a new password, or null when it can. */
export function passwordProblem(password: string): string | null {
  // Counted as the HTTP validator counts them: code points, a surrogate pair being one.
  const length = password.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, '_').length;
  const { minLength, maxLength } = PASSWORD_RULES;
  if (length < minLength) return `must be at least ${minLength} characters`;
  if (length > maxLength) return `must be at most ${maxLength} characters`;
  return null;
}
