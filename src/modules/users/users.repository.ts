/**
 * The only code that queries the users and user_servers tables. Deleted users keep their row
 * (their tickets and messages still name them) but lose their login name key, password and
 * server access, and no lookup here returns them.
 */
import { sql, type Compilable, type CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { Type } from 'typebox';
import { withConstraints, type Dialect } from '../../db/database.js';
import { readJson } from '../../db/json-column.js';
import { NoLongerExists } from '../../domain/conflicts.js';
import type { Database, UsersTable } from '../../db/schema.js';
import { usernameKey, type Role, type SignIn, type User } from '../../domain/user.js';
import { SERVER_PERMISSIONS, type ServerPermission } from '../../domain/policy.js';
import { byText } from '../../sort.js';

/** Permissions as stored; names this version does not know are dropped. */
const parsePermissions = (text: string): ServerPermission[] => {
  const stored = readJson(text, Type.Unknown(), 'user_servers.permissions');
  return Array.isArray(stored)
    ? SERVER_PERMISSIONS.filter((permission) => stored.includes(permission))
    : [];
};

export interface UserWithServers extends User {
  /** The servers assigned to the user by an admin, sorted by name. */
  readonly servers: readonly string[];
  readonly signIn: SignIn;
}

/** What a user holds on one server (see `accessOn`). */
export interface ServerAccess {
  /** null: the server is not in their list. */
  readonly permissions: Set<ServerPermission> | null;
  readonly owner: boolean;
}

/** Any constant; it names the advisory lock that serialises changes to who is admin. */
const USERS_LOCK = 0x5e7_2024;

const USER_COLUMNS = [
  'id',
  'username',
  'role',
  'token_version',
  'created_at',
  'last_login_at',
  // Whether a hash exists, without ever reading the hash where it is not needed.
  sql<number>`case when password_hash is null then 0 else 1 end`.as('has_password'),
  sql<number>`case when totp_secret is null then 0 else 1 end`.as('two_factor'),
] as const;

type UserRow = Pick<
  Selectable<UsersTable>,
  'id' | 'username' | 'role' | 'token_version' | 'created_at' | 'last_login_at'
> & { has_password: number | string; two_factor: number | string };

const toUser = (row: UserRow): User => ({
  id: row.id,
  username: row.username,
  role: row.role,
  tokenVersion: row.token_version,
  createdAt: row.created_at,
  lastLoginAt: row.last_login_at,
  hasPassword: Number(row.has_password) === 1,
  twoFactor: Number(row.two_factor) === 1,
});

/** A compiled query whose only parameter is a user id (checked once, when compiled). */
function compiledById<R>(query: Compilable<R>): CompiledQuery<R> {
  const compiled = query.compile();
  if (compiled.parameters.length !== 1) throw new Error(`not one parameter: ${compiled.sql}`);
  return compiled;
}

/**
 * `query` for the user `id`: the same SQL text, so the same prepared statement. It keeps the
 * query's id too, which only Kysely plugins read; the panel uses none.
 */
const withId = <R>(query: CompiledQuery<R>, id: number): CompiledQuery<R> => ({
  ...query,
  parameters: [id],
});

export class UsersRepository {
  /**
   * The queries of every authenticated request (`findById`) and of `GET /api/auth/me`, compiled
   * once rather than per call. The database sees the same SQL text each time: SQLite reuses its
   * prepared statement (see `openDatabase`), PostgreSQL gets one round trip.
   */
  readonly #byId: CompiledQuery<UserRow>;
  readonly #serverNames: CompiledQuery<{ server_name: string }>;
  readonly #providers: CompiledQuery<{ user_id: number; provider: string }>;
  readonly #db: Kysely<Database>;
  readonly #dialect: Dialect;

  constructor(db: Kysely<Database>, dialect: Dialect) {
    this.#db = db;
    this.#dialect = dialect;

    const id = 0; // a placeholder: each call passes its own
    this.#byId = compiledById(
      db
        .selectFrom('users')
        .select(USER_COLUMNS)
        .where('id', '=', id)
        .where('deleted_at', 'is', null),
    );
    this.#serverNames = compiledById(
      db.selectFrom('user_servers').select('server_name').where('user_id', '=', id),
    );
    this.#providers = compiledById(
      db.selectFrom('oidc_identities').select(['user_id', 'provider']).where('user_id', '=', id),
    );
  }

  /**
   * Runs `work` in one transaction that holds the users lock: on PostgreSQL an advisory lock, on
   * SQLite the single connection itself. Used where a rule spans rows ("first user is admin",
   * "an admin must remain"), so two requests cannot both pass the check.
   */
  transaction<T>(work: (users: UsersRepository) => Promise<T>): Promise<T> {
    if (this.#db.isTransaction) return work(this);
    return withConstraints(() =>
      this.#db.transaction().execute(async (trx) => {
        if (this.#dialect === 'postgres') {
          await sql`select pg_advisory_xact_lock(${USERS_LOCK})`.execute(trx);
        }
        return work(new UsersRepository(trx, this.#dialect));
      }),
    );
  }

  async findById(id: number): Promise<User | undefined> {
    const { rows } = await this.#db.executeQuery(withId(this.#byId, id));
    const row = rows[0];
    return row && toUser(row);
  }

  async findByUsername(username: string): Promise<User | undefined> {
    return (await this.findCredentials(username))?.user;
  }

  async findCredentials(
    username: string,
  ): Promise<{ user: User; passwordHash: string | null } | undefined> {
    const row = await this.#db
      .selectFrom('users')
      .select([...USER_COLUMNS, 'password_hash'])
      .where('username_key', '=', usernameKey(username))
      .executeTakeFirst();
    return row && { user: toUser(row), passwordHash: row.password_hash };
  }

  async passwordHash(id: number): Promise<string | null> {
    const row = await this.#db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row?.password_hash ?? null;
  }

  async list(): Promise<UserWithServers[]> {
    const [rows, links] = await Promise.all([
      this.#db.selectFrom('users').select(USER_COLUMNS).where('deleted_at', 'is', null).execute(),
      this.#db.selectFrom('user_servers').select(['user_id', 'server_name']).execute(),
    ]);
    rows.sort((a, b) => byText(usernameKey(a.username), usernameKey(b.username)));
    links.sort((a, b) => byText(a.server_name, b.server_name));
    const servers = new Map<number, string[]>();
    for (const link of links) {
      const list = servers.get(link.user_id);
      if (list) list.push(link.server_name);
      else servers.set(link.user_id, [link.server_name]);
    }
    const users = rows.map(toUser);
    const signIn = await this.signInOf(users);
    return users.map((user) => ({
      ...user,
      servers: servers.get(user.id) ?? [],
      signIn: signIn.get(user.id) ?? { hasPassword: user.hasPassword, providers: [] },
    }));
  }

  async serverNames(userId: number): Promise<string[]> {
    const { rows } = await this.#db.executeQuery(withId(this.#serverNames, userId));
    return rows.map((row) => row.server_name).sort(byText);
  }

  /** True once any user was ever registered, deleted ones included. */
  async anyEverRegistered(): Promise<boolean> {
    const row = await this.#db.selectFrom('users').select('id').limit(1).executeTakeFirst();
    return row !== undefined;
  }

  async countAdmins(): Promise<number> {
    const row = await this.#db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll().as('count'))
      .where('role', '=', 'admin')
      .where('deleted_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }

  /** Throws `AlreadyExists` when the name is taken. */
  async insert(user: {
    username: string;
    passwordHash: string | null;
    role: Role;
    now: Date;
  }): Promise<User> {
    const row = await withConstraints(() =>
      this.#db
        .insertInto('users')
        .values({
          username: user.username,
          username_key: usernameKey(user.username),
          password_hash: user.passwordHash,
          role: user.role,
          token_version: 0,
          created_at: user.now.toISOString(),
          last_login_at: null,
          deleted_at: null,
        })
        .returning(USER_COLUMNS)
        .executeTakeFirstOrThrow(),
    );
    return toUser(row);
  }

  async setRole(id: number, role: Role): Promise<void> {
    await this.#db.updateTable('users').set({ role }).where('id', '=', id).execute();
  }

  /**
   * Sets the user's list of servers: servers kept keep their permissions, servers added get
   * every permission, servers taken away that the user owned are left without an owner. Throws
   * `NoLongerExists` when one of the servers is gone.
   */
  async replaceServers(userId: number, names: readonly string[]): Promise<void> {
    let disowned = this.#db
      .updateTable('servers')
      .set({ owner_id: null })
      .where('owner_id', '=', userId);
    if (names.length > 0) disowned = disowned.where('name', 'not in', [...names]);
    await disowned.execute();
    let removal = this.#db.deleteFrom('user_servers').where('user_id', '=', userId);
    if (names.length > 0) removal = removal.where('server_name', 'not in', [...names]);
    await removal.execute();
    const kept = new Set(await this.serverNames(userId));
    const added = names.filter((name) => !kept.has(name));
    if (added.length > 0) {
      await withConstraints(() =>
        this.#db
          .insertInto('user_servers')
          .values(
            added.map((server_name) => ({
              user_id: userId,
              server_name,
              permissions: JSON.stringify(SERVER_PERMISSIONS),
            })),
          )
          .execute(),
      );
    }
  }

  /** The permissions the user holds on the server; null when it is not in their list. */
  async permissionsOn(userId: number, server: string): Promise<Set<ServerPermission> | null> {
    return (await this.accessOn(userId, server)).permissions;
  }

  /**
   * What the user holds on the server, in one query: the permissions of their list (null when
   * it is not in it) and whether they are its owner.
   */
  async accessOn(userId: number, server: string): Promise<ServerAccess> {
    const row = await this.#db
      .selectFrom('servers')
      .leftJoin('user_servers', (join) =>
        join
          .onRef('user_servers.server_name', '=', 'servers.name')
          .on('user_servers.user_id', '=', userId),
      )
      .select(['user_servers.permissions', 'servers.owner_id'])
      .where('servers.name', '=', server)
      .executeTakeFirst();
    return {
      permissions: row?.permissions == null ? null : new Set(parsePermissions(row.permissions)),
      owner: row?.owner_id != null && row.owner_id === userId,
    };
  }

  /** The servers in the user's list, with the permissions held on each and whether they own it. */
  async serverPermissions(
    userId: number,
  ): Promise<Map<string, { permissions: ServerPermission[]; owner: boolean }>> {
    const rows = await this.#db
      .selectFrom('user_servers')
      .innerJoin('servers', 'servers.name', 'user_servers.server_name')
      .select(['user_servers.server_name', 'user_servers.permissions', 'servers.owner_id'])
      .where('user_servers.user_id', '=', userId)
      .execute();
    return new Map(
      rows.map((row) => [
        row.server_name,
        {
          permissions: parsePermissions(row.permissions),
          owner: row.owner_id != null && row.owner_id === userId,
        },
      ]),
    );
  }

  /**
   * Makes `userId` the server's owner (null: no owner), in one transaction: the owner gets the
   * server in their list with every permission, and the previous owner loses it. Answers the
   * previous owner's id, or undefined when the server no longer exists.
   */
  async setOwner(
    server: string,
    userId: number | null,
  ): Promise<{ previous: number | null } | undefined> {
    // Under the users lock: an account deleted meanwhile cannot become an owner.
    return this.transaction(async (locked) => {
      const db = locked.#db;
      const row = await db
        .selectFrom('servers')
        .select('owner_id')
        .where('name', '=', server)
        .executeTakeFirst();
      if (!row) return undefined;
      if (userId !== null) {
        const live = await db
          .selectFrom('users')
          .select('id')
          .where('id', '=', userId)
          .where('deleted_at', 'is', null)
          .executeTakeFirst();
        if (!live) throw new NoLongerExists();
      }
      const previous = row.owner_id;
      await db
        .updateTable('servers')
        .set({ owner_id: userId })
        .where('name', '=', server)
        .execute();
      if (previous !== null && previous !== userId) {
        await db
          .deleteFrom('user_servers')
          .where('user_id', '=', previous)
          .where('server_name', '=', server)
          .execute();
      }
      if (userId !== null) {
        const every = JSON.stringify(SERVER_PERMISSIONS);
        await db
          .insertInto('user_servers')
          .values({ user_id: userId, server_name: server, permissions: every })
          .onConflict((conflict) =>
            conflict.columns(['user_id', 'server_name']).doUpdateSet({ permissions: every }),
          )
          .execute();
      }
      return { previous };
    });
  }

  /**
   * The live users with the server in their list, by name, with their permissions on it and
   * whether they own it.
   */
  async holdersOf(
    server: string,
  ): Promise<{ user: User; permissions: ServerPermission[]; owner: boolean }[]> {
    const links = await this.#db
      .selectFrom('user_servers')
      .innerJoin('servers', 'servers.name', 'user_servers.server_name')
      .select(['user_servers.user_id', 'user_servers.permissions', 'servers.owner_id'])
      .where('user_servers.server_name', '=', server)
      .execute();
    if (links.length === 0) return [];
    const rows = await this.#db
      .selectFrom('users')
      .select(USER_COLUMNS)
      .where(
        'id',
        'in',
        links.map((link) => link.user_id),
      )
      .where('deleted_at', 'is', null)
      .execute();
    const held = new Map(links.map((link) => [link.user_id, link.permissions]));
    const owner = links[0]?.owner_id ?? null;
    return rows
      .map((row) => ({
        user: toUser(row),
        permissions: parsePermissions(held.get(row.id) ?? '[]'),
        owner: row.id === owner,
      }))
      .sort((a, b) => byText(usernameKey(a.user.username), usernameKey(b.user.username)));
  }

  /**
   * Puts the server in the user's list with exactly these permissions (or changes them). Throws
   * `NoLongerExists` when the server or the user is gone.
   */
  async grant(
    userId: number,
    server: string,
    permissions: readonly ServerPermission[],
  ): Promise<void> {
    const value = JSON.stringify(SERVER_PERMISSIONS.filter((p) => permissions.includes(p)));
    await withConstraints(() =>
      this.#db
        .insertInto('user_servers')
        .values({ user_id: userId, server_name: server, permissions: value })
        .onConflict((conflict) =>
          conflict.columns(['user_id', 'server_name']).doUpdateSet({ permissions: value }),
        )
        .execute(),
    );
  }

  /**
   * Takes the server out of the user's list, and so leaves it without an owner when they owned
   * it; false when it was not there.
   */
  async revoke(userId: number, server: string): Promise<boolean> {
    await this.#db
      .updateTable('servers')
      .set({ owner_id: null })
      .where('name', '=', server)
      .where('owner_id', '=', userId)
      .execute();
    const result = await this.#db
      .deleteFrom('user_servers')
      .where('user_id', '=', userId)
      .where('server_name', '=', server)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  /**
   * Renames a live user; false when the user was deleted meanwhile. Throws `AlreadyExists` when
   * the name is taken.
   */
  async rename(id: number, username: string): Promise<boolean> {
    const result = await withConstraints(() =>
      this.#db
        .updateTable('users')
        .set({ username, username_key: usernameKey(username) })
        .where('id', '=', id)
        .where('deleted_at', 'is', null)
        .executeTakeFirst(),
    );
    return result.numUpdatedRows > 0n;
  }

  /**
   * Stores the new hash of a live user (null: the account has no password any more) and bumps
   * the token version; returns the new version, or `undefined` when the user was deleted
   * meanwhile.
   */
  async setPassword(id: number, passwordHash: string | null): Promise<number | undefined> {
    const row = await this.#db
      .updateTable('users')
      .set((eb) => ({ password_hash: passwordHash, token_version: eb('token_version', '+', 1) }))
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning('token_version')
      .executeTakeFirst();
    return row?.token_version;
  }

  async recordLogin(id: number, now: Date): Promise<void> {
    await this.#db
      .updateTable('users')
      .set({ last_login_at: now.toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** The live user linked to `subject` at `provider`, if any. */
  async findByIdentity(provider: string, subject: string): Promise<User | undefined> {
    const row = await this.#db
      .selectFrom('oidc_identities')
      .innerJoin('users', 'users.id', 'oidc_identities.user_id')
      .select([
        'users.id',
        'users.username',
        'users.role',
        'users.token_version',
        'users.created_at',
        'users.last_login_at',
        sql<number>`case when users.password_hash is null then 0 else 1 end`.as('has_password'),
        sql<number>`case when users.totp_secret is null then 0 else 1 end`.as('two_factor'),
      ])
      .where('oidc_identities.provider', '=', provider)
      .where('oidc_identities.subject', '=', subject)
      .where('users.deleted_at', 'is', null)
      .executeTakeFirst();
    return row && toUser(row);
  }

  async linkIdentity(identity: {
    userId: number;
    provider: string;
    subject: string;
    email: string | null;
    now: Date;
  }): Promise<void> {
    await withConstraints(() =>
      this.#db
        .insertInto('oidc_identities')
        .values({
          user_id: identity.userId,
          provider: identity.provider,
          subject: identity.subject,
          email: identity.email,
          created_at: identity.now.toISOString(),
        })
        .execute(),
    );
  }

  /** How each of `users` can sign in. */
  async signInOf(users: readonly User[]): Promise<Map<number, SignIn>> {
    const rows = await this.#providerLinks(users.map((user) => user.id));
    const providers = new Map<number, string[]>();
    for (const row of rows) {
      const list = providers.get(row.user_id);
      if (list) list.push(row.provider);
      else providers.set(row.user_id, [row.provider]);
    }
    return new Map(
      users.map((user) => [
        user.id,
        { hasPassword: user.hasPassword, providers: (providers.get(user.id) ?? []).sort(byText) },
      ]),
    );
  }

  async #providerLinks(ids: readonly number[]): Promise<{ user_id: number; provider: string }[]> {
    const [first, ...others] = ids;
    if (first === undefined) return [];
    // One user, as for `GET /api/auth/me`: the query compiled once.
    if (others.length === 0) {
      return (await this.#db.executeQuery(withId(this.#providers, first))).rows;
    }
    return this.#db
      .selectFrom('oidc_identities')
      .select(['user_id', 'provider'])
      .where('user_id', 'in', [...ids])
      .execute();
  }

  /**
   * Frees the name, drops the password, server access, provider links and SSH keys; keeps the
   * row for authorship.
   */
  async markDeleted(id: number, now: Date): Promise<void> {
    // The servers they owned stay, without an owner (docs/api.md, "A server's owner").
    await this.#db
      .updateTable('servers')
      .set({ owner_id: null })
      .where('owner_id', '=', id)
      .execute();
    await this.#db.deleteFrom('user_servers').where('user_id', '=', id).execute();
    // A later sign-in with the same provider account starts a fresh account.
    await this.#db.deleteFrom('oidc_identities').where('user_id', '=', id).execute();
    // Their SSH keys sign in no more, and a later account of the same name starts without them.
    await this.#db.deleteFrom('ssh_keys').where('user_id', '=', id).execute();
    await this.#db
      .updateTable('users')
      .set((eb) => ({
        username_key: null,
        password_hash: null,
        deleted_at: now.toISOString(),
        token_version: eb('token_version', '+', 1),
      }))
      .where('id', '=', id)
      .execute();
  }
}
