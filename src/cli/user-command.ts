/**
 * `game-panel user …`: the operator manages accounts on the host, whether the panel runs or not
 * (it opens the panel's database as the panel does: SQLite in WAL mode with a busy timeout, or
 * PostgreSQL). Every change goes through the users service the API uses, so the same rules hold
 * (names, passwords, the last admin) and a password change revokes the same things: the user's
 * session tokens (refused by a running panel at their next request, its console sockets closed
 * within `ConsoleLimits.recheckMs`) and API keys. Each change is audited with `via: cli`, the
 * actor being the system account that ran the command. A generated password is printed once,
 * on standard output; a password given with `--password-stdin` is never printed.
 */
import { randomInt } from 'node:crypto';
import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { loadPanelConfig } from '../config-file.js';
import { openDataDir } from '../data-dir.js';
import { openDatabase } from '../db/database.js';
import type { NewAuditEntry } from '../domain/audit.js';
import { ROLES, type Role } from '../domain/user.js';
import { AppError } from '../errors.js';
import { PanelEvents } from '../events.js';
import type { Logger } from '../log.js';
import { ApiKeysRepository } from '../modules/api-keys/api-keys.repository.js';
import { AuditRepository } from '../modules/audit/audit.repository.js';
import { AuditService } from '../modules/audit/audit.service.js';
import { LoginThrottle } from '../modules/auth/login-throttle.js';
import { PasswordHasher } from '../modules/auth/passwords.js';
import { ServersRepository } from '../modules/servers/servers.repository.js';
import { SecretBox } from '../modules/two-factor/secret-box.js';
import { TwoFactorRepository } from '../modules/two-factor/two-factor.repository.js';
import { TwoFactorService } from '../modules/two-factor/two-factor.service.js';
import { PasswordLinksRepository } from '../modules/users/password-links.repository.js';
import type { UserWithServers } from '../modules/users/users.repository.js';
import { UsersRepository } from '../modules/users/users.repository.js';
import { UsersService } from '../modules/users/users.service.js';
import { UsageError, type CliCommand, type CliIo } from './command.js';

const USAGE = `Usage: game-panel user <command> …   (or: npm run cli -- user <command> …)

Manage the panel's accounts on this host, whether the panel runs or not. The settings (the
database) are read as the panel reads them.

  user create <name> [--admin | --role <role>] [--password-stdin]
      Make an account; roles: ${ROLES.join(', ')} (user by default). Without
      --password-stdin a password is generated and printed once.
  user password <name> [--password-stdin]
      Set a new password (generated and printed once without --password-stdin). Their sessions
      and API keys are revoked at once, also in a running panel.
  user 2fa-off <name>
      Turn their two-factor sign-in off: they sign in with their password alone.
  user role <name> <role>
      Change their role. The last admin cannot be demoted.
  user list
      Every account: name, role, two-factor sign-in, how it signs in, last sign-in.

--password-stdin reads the password from standard input (one line), so that it appears
neither in the shell's history nor in the list of processes:
  printf '%s\\n' "$PASSWORD" | game-panel user password alice --password-stdin
`;

export const userCommand: CliCommand = {
  name: 'user',
  summary: 'manage accounts: create, password, 2fa-off, role, list',
  usage: USAGE,
  async run(args, io) {
    const [action, ...rest] = args;
    if (action === undefined) throw new UsageError('Which user command?');
    const { positionals, values } = parseOptions(rest);
    const step = plan(action, positionals, values);
    // Read before the database is opened: a wrong input changes nothing.
    const given = values['password-stdin'] === true ? await readPassword(io) : undefined;
    const { config } = loadPanelConfig(io.env);
    const kit = await openAccounts(config, io);
    try {
      await step(kit, given);
      return 0;
    } catch (error) {
      if (error instanceof AppError) {
        io.err(`${error.message}\n`);
        return 1;
      }
      throw error;
    } finally {
      await kit.close();
    }
  },
};

type Values = ReturnType<typeof parseOptions>['values'];
type Step = (kit: Accounts, given: string | undefined) => Promise<void>;

function parseOptions(args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        admin: { type: 'boolean' },
        role: { type: 'string' },
        'password-stdin': { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** What the words ask for, checked before anything is opened. */
function plan(action: string, positionals: readonly string[], values: Values): Step {
  const only = (allowed: readonly (keyof Values)[]): void => {
    for (const name of Object.keys(values)) {
      if (!allowed.includes(name as keyof Values)) {
        throw new UsageError(`user ${action} takes no --${name}`);
      }
    }
  };
  const names = (count: number, what: string): string[] => {
    if (positionals.length !== count) throw new UsageError(`user ${action} takes ${what}`);
    return [...positionals];
  };
  switch (action) {
    case 'create': {
      only(['admin', 'role', 'password-stdin']);
      const [name = ''] = names(1, 'one name');
      if (values.admin === true && values.role !== undefined) {
        throw new UsageError('Give --admin or --role, not both');
      }
      const role = values.admin === true ? 'admin' : roleOf(values.role ?? 'user');
      return (kit, given) => create(kit, name, role, given);
    }
    case 'password': {
      only(['password-stdin']);
      const [name = ''] = names(1, 'one name');
      return (kit, given) => setPassword(kit, name, given);
    }
    case '2fa-off': {
      only([]);
      const [name = ''] = names(1, 'one name');
      return (kit) => twoFactorOff(kit, name);
    }
    case 'role': {
      only([]);
      const [name = '', role = ''] = names(2, 'a name and a role');
      const wanted = roleOf(role);
      return (kit) => setRole(kit, name, wanted);
    }
    case 'list':
      only([]);
      names(0, 'no arguments');
      return list;
    default:
      throw new UsageError(`Unknown user command: ${action}`);
  }
}

function roleOf(text: string): Role {
  const role = ROLES.find((candidate) => candidate === text);
  if (role === undefined) {
    throw new UsageError(`Unknown role "${text}": one of ${ROLES.join(', ')}`);
  }
  return role;
}

/** What the steps work with: the users service, an audit writer and the output. */
interface Accounts {
  readonly users: UsersService;
  audit(entry: { action: string; target: string; details: Record<string, unknown> }): Promise<void>;
  readonly io: CliIo;
  close(): Promise<void>;
}

/**
 * The users service wired as the panel wires it (src/app.ts), on the panel's database. Events go
 * nowhere: a running panel is another process, and notices through the database (tokens are
 * checked against it at every request; console sockets periodically).
 */
async function openAccounts(config: Config, io: CliIo): Promise<Accounts> {
  // First: DATA_DIR is made when no panel ran yet, and the SQLite database goes there.
  const { jwtSecret } = openDataDir(config);
  const db = await openDatabase(config.database);
  const now = () => new Date();
  const hasher = new PasswordHasher();
  const users = new UsersRepository(db.kysely, db.dialect);
  const keys = new ApiKeysRepository(db.kysely);
  const log: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_details, message) => {
      io.err(`warning: ${message}\n`);
    },
    error: (_details, message) => {
      io.err(`warning: ${message}\n`);
    },
  };
  const twoFactor = new TwoFactorService({
    repo: new TwoFactorRepository(db.kysely),
    box: new SecretBox(jwtSecret),
    throttle: new LoginThrottle({ ...config.loginThrottle, now }),
    hasher,
    users,
    now,
  });
  const service = new UsersService({
    users,
    links: new PasswordLinksRepository(db.kysely),
    servers: new ServersRepository(db.kysely),
    hasher,
    apiKeys: { revokeAll: (userId) => keys.deleteAllOf(userId) },
    secondFactor: twoFactor,
    events: new PanelEvents(),
    publicUrl: config.publicUrl,
    now,
  });
  const audit = new AuditService({
    repo: new AuditRepository(db.kysely),
    requireSettings: () => Promise.reject(new Error('the command line reads no audit log')),
    retentionDays: config.auditRetentionDays,
    now,
    log,
  });
  const actor = operator(io.env);
  return {
    users: service,
    io,
    audit: ({ action, target, details }) => {
      const entry: NewAuditEntry = {
        actorId: null,
        actor: actor.name,
        via: 'cli',
        viaName: null,
        address: null,
        action,
        server: null,
        target,
        outcome: 'ok',
        status: null,
        details: { ...details, ...actor.details },
      };
      return audit.record(entry);
    },
    close: () => db.close(),
  };
}

/**
 * Who runs the command: the system account's name (`root`), and under sudo the account that
 * called sudo (as sudo tells it: what the log can name, not proof).
 */
function operator(env: CliIo['env']): { name: string; details: Record<string, unknown> } {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    // A uid without an entry in the password database (some containers).
    name = `uid ${process.getuid?.() ?? '?'}`;
  }
  const sudoUser = env.SUDO_USER;
  return { name, details: sudoUser ? { sudoUser } : {} };
}

/** The password on standard input: one line, its line ending dropped. */
async function readPassword(io: CliIo): Promise<string> {
  if (io.stdin.isTTY === true) io.err('Password (then Enter and Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of io.stdin) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const password = text.replace(/\r?\n$/, '');
  if (/[\r\n]/.test(password)) throw new UsageError('The password must be one line');
  if (password === '') throw new UsageError('No password on standard input');
  return password;
}

const PASSWORD_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * 24 letters and digits (about 143 random bits): nothing a shell or a form treats specially (a
 * leading `-` of base64url would look like an option), typed once and then changed by its owner.
 */
const generatedPassword = (): string =>
  Array.from({ length: 24 }, () => PASSWORD_ALPHABET[randomInt(PASSWORD_ALPHABET.length)]).join('');

async function create(kit: Accounts, name: string, role: Role, given: string | undefined) {
  const password = given ?? generatedPassword();
  const { user } = await kit.users.create({ username: name, role, password });
  await kit.audit({
    action: 'user.create',
    target: user.username,
    details: { username: user.username, role, generatedPassword: given === undefined },
  });
  kit.io.out(`Created ${user.username} (${role}).\n`);
  if (given === undefined) kit.io.out(`Their password, shown only this once: ${password}\n`);
}

async function setPassword(kit: Accounts, name: string, given: string | undefined) {
  const password = given ?? generatedPassword();
  const { username, revokedApiKeys } = await kit.users.setPassword(name, { password });
  await kit.audit({
    action: 'user.password',
    target: username,
    details: { generatedPassword: given === undefined, revokedApiKeys },
  });
  const keys = revokedApiKeys === 1 ? '1 API key' : `${revokedApiKeys} API keys`;
  kit.io.out(`Password of ${username} set; their sessions and ${keys} were revoked.\n`);
  if (given === undefined) kit.io.out(`Their password, shown only this once: ${password}\n`);
}

async function twoFactorOff(kit: Accounts, name: string) {
  const username = await kit.users.turnOffTwoFactor(name);
  await kit.audit({ action: 'user.two-factor-off', target: username, details: {} });
  kit.io.out(`Two-factor sign-in of ${username} is off: they sign in with their password.\n`);
}

async function setRole(kit: Accounts, name: string, role: Role) {
  const user = await kit.users.setRole(name, role);
  await kit.audit({ action: 'user.role', target: user.username, details: { role } });
  kit.io.out(`${user.username} is now ${role}.\n`);
}

async function list(kit: Accounts) {
  const users = await kit.users.list();
  if (users.length === 0) {
    kit.io.out('No accounts yet: make one with `user create <name> --admin`.\n');
    return;
  }
  const rows = [
    ['NAME', 'ROLE', '2FA', 'SIGN-IN', 'LAST SIGN-IN'],
    ...users.map((user: UserWithServers) => [
      user.username,
      user.role,
      user.twoFactor ? 'on' : 'off',
      signInOf(user),
      user.lastLoginAt ?? 'never',
    ]),
  ];
  const widths = rows[0]?.map((_, column) =>
    Math.max(...rows.map((row) => (row[column] ?? '').length)),
  );
  for (const row of rows) {
    const cells = row.map((cell, column) => cell.padEnd(widths?.[column] ?? 0));
    kit.io.out(`${cells.join('  ').trimEnd()}\n`);
  }
}

function signInOf(user: UserWithServers): string {
  const ways = [
    ...(user.signIn.hasPassword ? ['password'] : []),
    ...user.signIn.providers.map((provider) => `oidc:${provider}`),
  ];
  return ways.length === 0 ? 'none yet' : ways.join(',');
}
