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
