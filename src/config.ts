/**
 * The only reader of the panel's settings. Every setting is read and validated here, once, at
 * start; a bad value throws a {@link ConfigError} whose message is one line naming the variable.
 * The result is frozen and handed to everything else explicitly. Reading writes nothing: the data
 * directory and the generated JWT secret are made by src/data-dir.ts once every check has passed,
 * so a start that fails leaves nothing behind. Where the variables come from (the configuration
 * file, the environment) is src/config-file.ts's concern.
 */
import { isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export type SandboxMode = 'auto' | 'bwrap' | 'none';
export type ServerNetwork = 'host' | 'none';
export type RegistrationMode = 'open' | 'closed';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
/** `pretty`: lines for people; `json`: one JSON object a line; `auto`: pretty on a terminal. */
export type LogFormat = 'auto' | 'pretty' | 'json';

export interface OidcProviderConfig {
  /** Used in URLs: `/api/auth/oidc/<id>/login`. */
  readonly id: string;
  /** Shown to people: "Sign in with <name>". */
  readonly name: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scopes: readonly string[];
}

export interface Config {
  readonly host: string;
  readonly port: number;
  /** Absolute path of the data directory: SQLite file, server directories, generated secrets. */
  readonly dataDir: string;
  /** Absolute path of the directory that holds one folder per game server. */
  readonly serversDir: string;
  /** Where backups are kept: `BACKUP_DIR`, by default `DATA_DIR/backups`. */
  readonly backupDir: string;
  readonly database:
    | { readonly kind: 'sqlite'; readonly file: string }
    | { readonly kind: 'postgres'; readonly url: string };
  /**
   * `JWT_SECRET`: the HS256 key, at least 32 bytes; `null` when unset: the key kept in
   * `DATA_DIR/jwt-secret`, generated on first start (src/data-dir.ts, `prepareDataDir`).
   */
  readonly jwtSecret: Uint8Array | null;
  /** Where people reach the panel, without a trailing slash. */
  readonly publicUrl: string;
  /**
   * `TLS_CERT_FILE` and `TLS_KEY_FILE` (PEM): the panel serves HTTPS itself, and reads them again
   * on SIGHUP; `null`: plain HTTP (a TLS proxy in front, or loopback only). Only the paths are
   * kept: the files are read and checked when the panel is built (src/http/tls.ts).
   */
  readonly tls: TlsFiles | null;
  readonly sandbox: SandboxMode;
  /**
   * `SERVER_USER`: only for a panel that does not run as root, where it may name nobody but the
   * panel's own user (a panel running as root runs each server as a uid of its own).
   */
  readonly serverUser: string | null;
  /**
   * `SERVER_UID_RANGE`: the uids (and gids) a panel running as root gives its servers, one each:
   * the first plus the server's id (docs/security.md).
   */
  readonly serverUidRange: { readonly first: number; readonly last: number };
  /** Host paths a sandboxed server may read besides the system's own (games installed there). */
  readonly sandboxReadOnlyPaths: readonly string[];
  /** `host`: servers share the host's network (players can reach them); `none`: loopback only. */
  readonly serverNetwork: ServerNetwork;
  /** `SERVER_PORT_RANGE`: the ports an admin may give servers (`1024-65535`). */
  readonly serverPortRange: { readonly min: number; readonly max: number };
  /**
   * `DOCKER_HOST`: the Docker engine of the docker runtime (`unix:///path`, `tcp://host:port`,
   * `http://…` or `https://…`); `null`: the local socket, /var/run/docker.sock.
   */
  readonly dockerHost: string | null;
  /**
   * `DOCKER_CERT_PATH`: the folder of ca.pem, cert.pem and key.pem for an `https://` DOCKER_HOST
   * (the engine's CA, and the panel's client certificate); `null`: the system's CAs, no client
   * certificate.
   */
  readonly dockerCertPath: string | null;
  /**
   * `DISK_QUOTA_GRACE_SECONDS`: how long a running server may stay over its disk quota, warned
   * in its console, before the panel stops it.
   */
  readonly diskGraceSeconds: number;
  /** How many days the audit log keeps an entry (`AUDIT_RETENTION_DAYS`); 0 keeps them forever. */
  readonly auditRetentionDays: number;
  /** The panel's own PATH: where bubblewrap is looked for (servers get a fixed, minimal PATH). */
  readonly searchPath: string;
  /**
   * `REGISTRATION`: `open` or `closed` decides alone; `null` (unset): open until the first account
   * exists (it becomes the admin), then as the admin sets it in the panel's settings (closed by
   * default). docs/security.md, "Registration".
   */
  readonly registration: RegistrationMode | null;
  /** `REGISTRATION_MAX_PER_ADDRESS` accounts one client address may make per window (429 past). */
  readonly registrationLimit: { readonly maxPerAddress: number; readonly windowSeconds: number };
  /**
   * `TICKETS_PER_HOUR` and `TICKET_MESSAGES_PER_HOUR`: what one user (not staff) may open and
   * write in an hour (429 past).
   */
  readonly ticketLimits: { readonly ticketsPerHour: number; readonly messagesPerHour: number };
  readonly maxBodyBytes: number;
  /** `null`: no limit. */
  readonly maxUploadBytes: number | null;
  readonly maxEditBytes: number;
  /**
   * What one extraction may unpack: `ARCHIVE_MAX_BYTES` (default MAX_UPLOAD_BYTES, else 1 GiB)
   * and `ARCHIVE_MAX_ENTRIES` (default 100,000).
   */
  readonly archiveMaxBytes: number;
  readonly archiveMaxEntries: number;
  /**
   * Largest ticket description or message, in UTF-8 bytes (413 above). Bounded so that no ticket
   * can grow into something the panel cannot read back (see docs/api.md, Tickets).
   */
  readonly ticketMessageMaxBytes: number;
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
  readonly loginThrottle: {
    /**
     * Failed logins one client address may make on one account inside the window before that
     * address is refused for that account with 429 (other addresses are not affected).
     */
    readonly maxFailuresPerAccount: number;
    /** Failed logins one client address may collect inside the window before it is refused. */
    readonly maxFailuresPerAddress: number;
    /** Failed logins of one account, from any address, after which its logins are slowed. */
    readonly slowDownAfterAccountFailures: number;
    readonly windowSeconds: number;
  };
  /**
   * Addresses or CIDR ranges of reverse proxies whose `X-Forwarded-For` is believed when telling
   * the client's address (login throttling). Empty: the socket's address counts.
   */
  readonly trustProxy: readonly string[];
  /**
   * `WEBHOOK_ALLOWED_HOSTS`: hosts a webhook may point at although they are the panel's own,
   * loopback, private or otherwise non-public (docs/webhooks.md). A `port` of null allows every
   * port of the host.
   */
  readonly webhookAllowedHosts: readonly AllowedHost[];
  /**
   * Where `/metrics` (Prometheus text) is served; docs/metrics.md. Neither set: nowhere.
   */
  readonly metrics: {
    /**
     * `METRICS_TOKEN`: served on the panel's own port to a caller sending
     * `Authorization: Bearer <token>`; `null`: not served there.
     */
    readonly token: string | null;
    /**
     * `METRICS_ADDRESS`: served without a token by a listener of its own on this address
     * (port 0: any free port); `null`: no such listener.
     */
    readonly address: MetricsAddress | null;
  };
  /** The SFTP server (docs/sftp.md); null: `SFTP_PORT=0`, none. */
  readonly sftp: SftpConfig | null;
  readonly oidc: {
    readonly providers: readonly OidcProviderConfig[];
    /** Origins the browser may be sent back to after an OpenID Connect sign-in. */
    readonly redirectAllowlist: readonly string[];
  };
}

export interface SftpConfig {
  /** `SFTP_ADDRESS`: where it listens (default: HOST, so behind a proxy only loopback). */
  readonly address: string;
  /** `SFTP_PORT` (default 2022, as Wings). */
  readonly port: number;
  /** `SFTP_MAX_SESSIONS_PER_USER` signed-in connections one account may hold (default 10). */
  readonly maxSessionsPerUser: number;
  /** `SFTP_MAX_CONNECTIONS_PER_ADDRESS` connections from one address, signed in or not (20). */
  readonly maxConnectionsPerAddress: number;
  /** `SFTP_IDLE_SECONDS` without a request before a session is ended (default 900). */
  readonly idleSeconds: number;
}

export interface AllowedHost {
  /** A host name (lower case, without a trailing dot) or an IP address (IPv6 without brackets). */
  readonly host: string;
  readonly port: number | null;
}

export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface MetricsAddress {
  /** An IP address (IPv6 without brackets) or a host name. */
  readonly host: string;
  readonly port: number;
}

export class ConfigError extends Error {
  /**
   * `source`: the configuration file the bad value came from, named in the message after the
   * variable.
   */
  constructor(
    readonly variable: string,
    readonly problem: string,
    readonly source?: string,
  ) {
    super(`${variable}${source === undefined ? '' : ` (in ${source})`}: ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Readonly<Record<string, string | undefined>>;

export const MIN_SECRET_BYTES = 32;

/** `DATA_DIR` when unset, for a panel running as root: the place of a host install. */
export const ROOT_DATA_DIR = '/var/lib/game-panel';

/**
 * Reads the configuration from `env`, and nothing else: no file is made or read but those
 * variables name (`OIDC_PROVIDERS_FILE`). `runningAsRoot` picks the default DATA_DIR:
 * {@link ROOT_DATA_DIR} as root, `./data` otherwise.
 */
export function loadConfig(
  env: Env = process.env,
  runningAsRoot: boolean = process.getuid?.() === 0,
): Config {
  const host = text(env, 'HOST', '127.0.0.1');
  const port = integer(env, 'PORT', 8000, 0, 65535);
  const dataDir = path.resolve(text(env, 'DATA_DIR', runningAsRoot ? ROOT_DATA_DIR : './data'));
  const serversDir = path.join(dataDir, 'servers');

  const databaseUrl = env.DATABASE_URL?.trim();
  let database: Config['database'];
  if (databaseUrl === undefined || databaseUrl === '') {
    database = { kind: 'sqlite', file: path.join(dataDir, 'panel.sqlite') };
  } else if (/^postgres(ql)?:\/\//.test(databaseUrl) && URL.canParse(databaseUrl)) {
    database = { kind: 'postgres', url: databaseUrl };
  } else {
    throw new ConfigError('DATABASE_URL', 'must be a postgres:// URL, or unset for SQLite');
  }

  const tls = tlsFiles(env);
  const publicUrl = parsePublicUrl(env, host, port, tls !== null);

  const config: Config = {
    host,
    port,
    dataDir,
    serversDir,
    backupDir: path.resolve(text(env, 'BACKUP_DIR', path.join(dataDir, 'backups'))),
    database,
    jwtSecret: jwtSecret(env),
    publicUrl,
    tls,
    sandbox: oneOf(env, 'SANDBOX', ['auto', 'bwrap', 'none'], 'auto'),
    serverUser: optionalText(env, 'SERVER_USER'),
    serverUidRange: uidRange(env, 'SERVER_UID_RANGE'),
    sandboxReadOnlyPaths: readOnlyPaths(env, 'SANDBOX_READ_ONLY_PATHS', dataDir),
    serverNetwork: oneOf(env, 'SERVER_NETWORK', ['host', 'none'], 'host'),
    serverPortRange: portRange(env, 'SERVER_PORT_RANGE'),
    dockerHost: dockerHost(env),
    dockerCertPath: dockerCertPath(env),
    diskGraceSeconds: integer(env, 'DISK_QUOTA_GRACE_SECONDS', 60, 0, 86_400),
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 90, 0, 36_500),
    searchPath: env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    registration: optionalOneOf(env, 'REGISTRATION', ['open', 'closed']),
    registrationLimit: {
      maxPerAddress: integer(env, 'REGISTRATION_MAX_PER_ADDRESS', 5, 1, 1_000_000),
      windowSeconds: integer(env, 'REGISTRATION_WINDOW_SECONDS', 3600, 1, 86_400 * 7),
    },
    ticketLimits: {
      ticketsPerHour: integer(env, 'TICKETS_PER_HOUR', 10, 1, 1_000_000),
      messagesPerHour: integer(env, 'TICKET_MESSAGES_PER_HOUR', 60, 1, 1_000_000),
    },
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1024 * 1024, 1024, 1024 ** 3),
    maxUploadBytes: optionalInteger(env, 'MAX_UPLOAD_BYTES', 1, Number.MAX_SAFE_INTEGER),
    maxEditBytes: integer(env, 'MAX_EDIT_BYTES', 5 * 1024 * 1024, 1, 1024 ** 3),
    archiveMaxBytes: integer(
      env,
      'ARCHIVE_MAX_BYTES',
      optionalInteger(env, 'MAX_UPLOAD_BYTES', 1, Number.MAX_SAFE_INTEGER) ?? 1024 ** 3,
      1,
      Number.MAX_SAFE_INTEGER,
    ),
    archiveMaxEntries: integer(env, 'ARCHIVE_MAX_ENTRIES', 100_000, 1, 10_000_000),
    ticketMessageMaxBytes: integer(env, 'TICKET_MESSAGE_MAX_BYTES', 64 * 1024, 1, 1024 ** 2),
    logLevel: oneOf(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      'info',
    ),
    logFormat: oneOf(env, 'LOG_FORMAT', ['auto', 'pretty', 'json'], 'auto'),
    loginThrottle: {
      maxFailuresPerAccount: integer(env, 'LOGIN_MAX_FAILURES_PER_ACCOUNT', 10, 1, 1_000_000),
      maxFailuresPerAddress: integer(env, 'LOGIN_MAX_FAILURES_PER_ADDRESS', 50, 1, 1_000_000),
      slowDownAfterAccountFailures: integer(
        env,
        'LOGIN_SLOW_DOWN_AFTER_FAILURES',
        100,
        1,
        1_000_000,
      ),
      windowSeconds: integer(env, 'LOGIN_THROTTLE_WINDOW_SECONDS', 900, 1, 86_400),
    },
    trustProxy: addressList(env, 'TRUST_PROXY'),
    webhookAllowedHosts: allowedHosts(env, 'WEBHOOK_ALLOWED_HOSTS'),
    metrics: {
      token: metricsToken(env),
      address: metricsAddress(env),
    },
    sftp: sftpConfig(env, host),
    oidc: {
      providers: oidcProviders(env),
      redirectAllowlist: originList(env, 'OIDC_REDIRECT_ALLOWLIST', publicUrl),
    },
  };
  return Object.freeze(config);
}

/** The largest uid a range may reach: 2^32 - 2 (2^32 - 1 is "no uid" to the kernel). */
const MAX_UID = 4_294_967_294;

function uidRange(env: Env, name: string): { first: number; last: number } {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return { first: 200_000, last: 299_999 };
  const match = /^(\d{1,10})-(\d{1,10})$/.exec(raw);
  const first = Number(match?.[1]);
  const last = Number(match?.[2]);
  if (!match || first < 1000 || last > MAX_UID || first >= last) {
    throw new ConfigError(
      name,
      `must be two uids as first-last, first at least 1000 and below last, last at most ${MAX_UID}, got "${raw}"`,
    );
  }
  return { first, last };
}

function portRange(env: Env, name: string): { min: number; max: number } {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return { min: 1024, max: 65535 };
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(raw);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < 1 || max > 65535 || min > max) {
    throw new ConfigError(name, `must be two ports from 1 to 65535 as low-high, got "${raw}"`);
  }
  return { min, max };
}

const MIN_METRICS_TOKEN_LENGTH = 16;

/** At least 16 visible ASCII characters: a bearer token, sent as it is in a header. */
function metricsToken(env: Env): string | null {
  const value = optionalText(env, 'METRICS_TOKEN');
  if (value === null) return null;
  if (!/^[\x21-\x7e]+$/.test(value)) {
    throw new ConfigError('METRICS_TOKEN', 'must be visible ASCII characters, without spaces');
  }
  if (value.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigError(
      'METRICS_TOKEN',
      `must be at least ${MIN_METRICS_TOKEN_LENGTH} characters, got ${value.length}`,
    );
  }
  return value;
}

/** SFTP: on port 2022 of HOST unless told otherwise; `SFTP_PORT=0` turns it off. */
function sftpConfig(env: Env, host: string): SftpConfig | null {
  const port = integer(env, 'SFTP_PORT', 2022, 0, 65535);
  if (port === 0) return null;
  const address = text(env, 'SFTP_ADDRESS', host);
  if (!/^[0-9A-Za-z:.-]+$/.test(address)) {
    throw new ConfigError(
      'SFTP_ADDRESS',
      `must be an IP address or a host name (0.0.0.0, ::, 127.0.0.1), got "${address}"`,
    );
  }
  return {
    address,
    port,
    maxSessionsPerUser: integer(env, 'SFTP_MAX_SESSIONS_PER_USER', 10, 1, 10_000),
    maxConnectionsPerAddress: integer(env, 'SFTP_MAX_CONNECTIONS_PER_ADDRESS', 20, 1, 100_000),
    idleSeconds: integer(env, 'SFTP_IDLE_SECONDS', 900, 10, 86_400 * 7),
  };
}

/** `host:port`, `[ipv6]:port`: where the metrics listener listens. */
function metricsAddress(env: Env): MetricsAddress | null {
  const raw = optionalText(env, 'METRICS_ADDRESS');
  if (raw === null) return null;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(raw);
  const bracketed = match?.[1];
  const host = bracketed ?? match?.[2];
  const port = Number(match?.[3]);
  const badHost =
    host === undefined || (bracketed === undefined ? /^[.-]/.test(host) : isIP(host) !== 6);
  if (host === undefined || badHost || port > 65535) {
    throw new ConfigError(
      'METRICS_ADDRESS',
      `must be host:port with a port up to 65535 (127.0.0.1:9464, [::1]:9464), got "${raw}"`,
    );
  }
  return { host, port };
}

function dockerHost(env: Env): string | null {
  const value = optionalText(env, 'DOCKER_HOST');
  if (value === null) return null;
  if (!/^(unix|tcp|http|https):\/\/./.test(value)) {
    throw new ConfigError(
      'DOCKER_HOST',
      'must be unix:///path, tcp://host:port or http(s)://host:port',
    );
  }
  return value;
}

function dockerCertPath(env: Env): string | null {
  const value = optionalText(env, 'DOCKER_CERT_PATH');
  if (value === null) return null;
  if (!path.isAbsolute(value))
    throw new ConfigError('DOCKER_CERT_PATH', 'must be an absolute path');
  return value;
}

function text(env: Env, name: string, fallback: string): string {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? fallback : value;
}

function optionalText(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? null : value;
}

/** Colon-separated absolute paths, none of them the root, DATA_DIR or anything holding it. */
function readOnlyPaths(env: Env, name: string, dataDir: string): string[] {
  const raw = optionalText(env, name);
  if (raw === null) return [];
  return raw.split(':').map((entry) => {
    const resolved = path.resolve(entry);
    if (!path.isAbsolute(entry) || entry.includes('\0')) {
      throw new ConfigError(name, `"${entry}" is not an absolute path`);
    }
    const relative = path.relative(resolved, dataDir);
    if (relative === '' || !relative.startsWith('..')) {
      throw new ConfigError(name, `"${entry}" would show the panel's data directory to servers`);
    }
    return resolved;
  });
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  return optionalInteger(env, name, min, max) ?? fallback;
}

function optionalInteger(env: Env, name: string, min: number, max: number): number | null {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${raw}`);
  }
  return value;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  return optionalOneOf(env, name, allowed) ?? fallback;
}

function optionalOneOf<T extends string>(env: Env, name: string, allowed: readonly T[]): T | null {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return null;
  const found = allowed.find((value) => value === raw);
  if (found === undefined) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return found;
}

function addressList(env: Env, name: string): string[] {
  const raw = env[name]?.trim() ?? '';
  if (raw === '') return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= 128);
    if (rest.length > 0 || address === undefined || isIP(address) === 0 || !validBits) {
      throw new ConfigError(name, `"${entry}" is not an IP address or CIDR range`);
    }
  }
  return entries;
}

/** Comma-separated `host`, `host:port`, `[ipv6]` or `[ipv6]:port` entries. */
function allowedHosts(env: Env, name: string): AllowedHost[] {
  const raw = optionalText(env, name);
  if (raw === null) return [];
  return raw.split(',').map((item) => {
    const entry = item.trim();
    const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/.exec(entry);
    const bracketed = match?.[1];
    const host = (bracketed ?? match?.[2])?.toLowerCase().replace(/\.$/, '');
    const port = match?.[3] === undefined ? null : Number(match[3]);
    const badHost =
      host === undefined ||
      host === '' ||
      (bracketed === undefined ? /^[.-]|\.\.|[.-]$/.test(host) : isIP(host) !== 6);
    if (host === undefined || badHost || (port !== null && (port < 1 || port > 65535))) {
      throw new ConfigError(
        name,
        `"${entry}" is not a host, host:port, [ipv6] or [ipv6]:port (port 1 to 65535)`,
      );
    }
    return { host, port };
  });
}

/** Providers from `OIDC_PROVIDERS` (JSON) or the file named by `OIDC_PROVIDERS_FILE`. */
function oidcProviders(env: Env): OidcProviderConfig[] {
  const inline = env.OIDC_PROVIDERS?.trim();
  const file = env.OIDC_PROVIDERS_FILE?.trim();
  if (inline && file) {
    throw new ConfigError('OIDC_PROVIDERS', 'set OIDC_PROVIDERS or OIDC_PROVIDERS_FILE, not both');
  }
  let variable = 'OIDC_PROVIDERS';
  let text = inline;
  if (file) {
    variable = 'OIDC_PROVIDERS_FILE';
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new ConfigError(variable, `cannot read ${file} (${errorCode(error)})`);
    }
  }
  if (!text) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new ConfigError(variable, 'is not valid JSON');
  }
  if (!Array.isArray(raw)) throw new ConfigError(variable, 'must be a JSON array of providers');
  const seen = new Set<string>();
  return raw.map((entry: unknown, index) => {
    const where = `provider ${index + 1}`;
    if (typeof entry !== 'object' || entry === null) {
      throw new ConfigError(variable, `${where} must be an object`);
    }
    const field = (name: string): string => {
      const value = (entry as Record<string, unknown>)[name];
      if (typeof value !== 'string' || value.trim() === '') {
        throw new ConfigError(variable, `${where} needs "${name}" (a non-empty string)`);
      }
      return value.trim();
    };
    const id = field('id');
    if (!/^[a-z0-9_-]{1,32}$/.test(id)) {
      throw new ConfigError(variable, `${where}: "id" must be 1 to 32 of a-z 0-9 _ -`);
    }
    if (seen.has(id)) throw new ConfigError(variable, `${where}: the id "${id}" is used twice`);
    seen.add(id);
    const issuer = field('issuer');
    let url: URL;
    try {
      url = new URL(issuer);
    } catch {
      throw new ConfigError(variable, `${where}: "issuer" must be a URL`);
    }
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      throw new ConfigError(variable, `${where}: "issuer" must be https (http only on loopback)`);
    }
    const scopes = (entry as { scopes?: unknown }).scopes ?? ['openid', 'profile', 'email'];
    if (!Array.isArray(scopes) || !scopes.every((scope) => typeof scope === 'string')) {
      throw new ConfigError(variable, `${where}: "scopes" must be an array of strings`);
    }
    return {
      id,
      name: field('name'),
      issuer,
      clientId: field('clientId'),
      clientSecret: field('clientSecret'),
      scopes: scopes.includes('openid') ? scopes : ['openid', ...scopes],
    };
  });
}

/** Comma-separated http(s) origins; unset: the origin of `fallback`. */
function originList(env: Env, name: string, fallback: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [new URL(fallback).origin];
  return raw.split(',').map((entry) => {
    let url: URL;
    try {
      url = new URL(entry.trim());
    } catch {
      throw new ConfigError(name, `"${entry.trim()}" is not an absolute URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw new ConfigError(name, `"${entry.trim()}" must be http or https`);
    }
    return url.origin;
  });
}

/** Both `TLS_CERT_FILE` and `TLS_KEY_FILE`, or neither; absolute or relative to the start folder. */
function tlsFiles(env: Env): TlsFiles | null {
  const certFile = optionalText(env, 'TLS_CERT_FILE');
  const keyFile = optionalText(env, 'TLS_KEY_FILE');
  if (certFile === null && keyFile === null) return null;
  if (certFile === null) throw new ConfigError('TLS_CERT_FILE', 'is needed with TLS_KEY_FILE');
  if (keyFile === null) throw new ConfigError('TLS_KEY_FILE', 'is needed with TLS_CERT_FILE');
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) };
}

/** Unset: the panel's own address, `https://` when it serves TLS itself. */
function parsePublicUrl(env: Env, host: string, port: number, tls: boolean): string {
  const raw = env.PUBLIC_URL?.trim();
  if (raw === undefined || raw === '') {
    const shownHost = host.includes(':') ? `[${host}]` : host;
    return `${tls ? 'https' : 'http'}://${shownHost}:${port}`;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL, got "${raw}"`);
  }
  return url.href.replace(/\/+$/, '');
}

/** `JWT_SECRET` when set (at least 32 bytes); `null`: the generated one in DATA_DIR. */
function jwtSecret(env: Env): Uint8Array | null {
  const given = env.JWT_SECRET;
  if (given === undefined || given === '') return null;
  const bytes = Buffer.from(given, 'utf8');
  if (bytes.length < MIN_SECRET_BYTES) {
    throw new ConfigError(
      'JWT_SECRET',
      `must be at least ${MIN_SECRET_BYTES} bytes, got ${bytes.length}`,
    );
  }
  return new Uint8Array(bytes);
}

function errorCode(error: unknown): string {
  return error instanceof Error && 'code' in error && typeof error.code === 'string'
    ? error.code
    : 'unknown error';
}
