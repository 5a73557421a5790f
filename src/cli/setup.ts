/**
 * `setup`: writes the panel's configuration file from flags, or from a person's answers to what
 * the flags left open: where people reach the panel, where it listens, its database (checked by
 * connecting), registration, and a generated JWT_SECRET. Nothing is written unless every value
 * is good; an existing file is rewritten only with `--force`, keeping its JWT_SECRET (sessions
 * survive) and the variables setup does not ask about.
 */
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import pg from 'pg';
import { readFlags } from './args.js';
import { UsageError, type CliCommand, type CliIo } from './command.js';
import {
  UnwritableValue,
  errorCode,
  newSecret,
  previousValues,
  renderConfigFile,
  writeFileAtomically,
} from './config-file.js';
import { configFileTarget } from '../config-file.js';
import { asker, type Asker } from './prompt.js';

const USAGE = `Usage: game-panel setup [options]

Writes the panel's configuration file: PANEL_CONFIG when set, else /etc/game-panel/panel.env
as root, else .env in the checkout (mode 0600, with a generated JWT_SECRET). Asks for what the
options leave open, one answer a line (Enter takes the default), unless --yes is given.

Options:
  --public-url URL          where people reach the panel (https://panel.example.com)
  --host ADDRESS            address to listen on (127.0.0.1: this machine only; 0.0.0.0: all)
  --port PORT               port to listen on (1-65535; default 8000)
  --database DB             sqlite (embedded, the default) or a postgres:// URL (checked by
                            connecting)
  --registration MODE       open, closed, or unset (open until the first account, the admin,
                            then as the admin sets it)
  --behind-proxy            a reverse proxy on this machine serves the panel (HTTPS):
                            HOST=127.0.0.1 and TRUST_PROXY=127.0.0.1
  --yes                     ask nothing: defaults for what is not given
  --force                   rewrite an existing file (its JWT_SECRET and other variables kept)

Exit status: 0 written, 1 failed (nothing written), 2 bad option or answer (nothing written).`;

type Registration = 'open' | 'closed' | 'unset';

interface Settings {
  readonly host: string;
  readonly port: number;
  readonly publicUrl: string;
  /** `sqlite` or a postgres:// URL. */
  readonly database: string;
  readonly registration: Registration;
  /** `null`: no reverse proxy is believed. */
  readonly trustProxy: string | null;
}

/** The settings this command asks about; everything else in an old file is kept as it was. */
const MANAGED = [
  'HOST',
  'PORT',
  'PUBLIC_URL',
  'TRUST_PROXY',
  'DATABASE_URL',
  'REGISTRATION',
  'JWT_SECRET',
];

/** The database could not be reached: the command fails (exit status 1), nothing written. */
class DatabaseUnreachable extends Error {}

export const setupCommand: CliCommand = {
  name: 'setup',
  summary: 'write the configuration file (address, public URL, database, registration, secret)',
  usage: USAGE,
  run,
};

async function run(args: readonly string[], io: CliIo): Promise<number> {
  const { values: flags } = readFlags(args, {
    'public-url': { type: 'string' },
    host: { type: 'string' },
    port: { type: 'string' },
    database: { type: 'string' },
    registration: { type: 'string' },
    'behind-proxy': { type: 'boolean' },
    yes: { type: 'boolean' },
    force: { type: 'boolean' },
  });
  const given = {
    publicUrl: flag(flags['public-url'], '--public-url', publicUrlCheck),
    host: flag(flags.host, '--host', hostCheck),
    port: flag(flags.port, '--port', portCheck),
    database: flag(flags.database, '--database', databaseCheck),
    registration: flag(flags.registration, '--registration', registrationCheck),
  };
  const behindProxyFlag = flags['behind-proxy'] === true;
  if (behindProxyFlag && given.host !== undefined && !isLoopback(given.host)) {
    throw new UsageError(
      `--behind-proxy listens on 127.0.0.1 for the proxy: leave out --host ${given.host}`,
    );
  }

  const file = configFileTarget(io.env, process.getuid?.() === 0);
  let previous: Record<string, string> | null;
  try {
    previous = previousValues(file);
  } catch (error) {
    io.err(`Cannot read ${file} (${errorCode(error)}). Nothing was written.\n`);
    return 1;
  }
  if (previous !== null && flags.force !== true) {
    io.err(
      `${file} exists already: nothing was written. Run setup again with --force to rewrite ` +
        `it (its JWT_SECRET is kept, so sessions survive), or edit it by hand.\n`,
    );
    return 1;
  }

  const old = (name: string): string | undefined => {
    const value = previous?.[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const questions = flags.yes === true ? null : asker(io);
  let settings: Settings;
  try {
    settings = await decide(given, behindProxyFlag, old, questions);
  } catch (error) {
    if (error instanceof DatabaseUnreachable) {
      io.err(`${error.message}. Nothing was written.\n`);
      return 1;
    }
    throw error;
  } finally {
    questions?.close();
  }

  const kept = previous?.JWT_SECRET;
  const keepSecret = kept !== undefined && Buffer.byteLength(kept) >= 32;
  let text: string;
  try {
    text = renderConfigFile(HEADER, [
      ['HOST', settings.host],
      ['PORT', String(settings.port)],
      ['PUBLIC_URL', settings.publicUrl],
      ...(settings.trustProxy === null ? [] : [['TRUST_PROXY', settings.trustProxy] as const]),
      settings.database === 'sqlite'
        ? (['DATABASE_URL unset: the embedded SQLite database, in DATA_DIR', null] as const)
        : (['DATABASE_URL', settings.database] as const),
      settings.registration === 'unset'
        ? ([
            'REGISTRATION unset: open until the first account (the admin), then as the admin sets it',
            null,
          ] as const)
        : (['REGISTRATION', settings.registration] as const),
      ['JWT_SECRET', keepSecret ? kept : newSecret()],
      ...keptVariables(previous),
    ]);
  } catch (error) {
    if (!(error instanceof UnwritableValue)) throw error;
    io.err(`${error.message}. Nothing was written.\n`);
    return 1;
  }

  try {
    if (!writeFileAtomically(file, text, previous !== null)) {
      io.err(`${file} appeared meanwhile: nothing was written. Use --force to rewrite it.\n`);
      return 1;
    }
  } catch (error) {
    io.err(`Cannot write ${file} (${errorCode(error)}). Nothing was written.\n`);
    return 1;
  }
  io.out(report(file, settings, keepSecret, previous));
  return 0;
}

const HEADER = [
  "The game panel's configuration, written by `game-panel setup`.",
  'NAME=value lines, read once at start; a variable set in the environment overrides its line.',
  "Every variable is described in the README's Configuration table; edit freely, then restart",
  'the panel. Keep this file private (mode 0600): JWT_SECRET signs every session.',
];

async function decide(
  given: {
    readonly publicUrl: string | undefined;
    readonly host: string | undefined;
    readonly port: number | undefined;
    readonly database: string | undefined;
    readonly registration: Registration | undefined;
  },
  behindProxyFlag: boolean,
  old: (name: string) => string | undefined,
  questions: Asker | null,
): Promise<Settings> {
  const ask = async <T>(
    value: T | undefined,
    label: string,
    question: string,
    fallback: string,
    check: (answer: string) => T,
  ): Promise<T> => {
    if (value !== undefined) return value;
    const labelled = (answer: string): T => {
      try {
        return check(answer);
      } catch (error) {
        if (error instanceof UsageError) throw new UsageError(`${label}: ${error.message}`);
        throw error;
      }
    };
    return questions === null ? labelled(fallback) : questions.ask(question, fallback, labelled);
  };

  const oldProxy = old('TRUST_PROXY');
  const behindProxy =
    behindProxyFlag ||
    (given.host === undefined &&
      (await ask(
        undefined,
        'reverse proxy',
        'Will a reverse proxy on this machine (Caddy, nginx) serve the panel over HTTPS? (yes/no)',
        oldProxy === undefined ? 'no' : 'yes',
        yesNoCheck,
      )));
  const host = behindProxy
    ? '127.0.0.1'
    : await ask(
        given.host,
        'address',
        'Address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface)',
        valid(old('HOST'), hostCheck) ?? '127.0.0.1',
        hostCheck,
      );
  const port = await ask(
    given.port,
    'port',
    'Port to listen on',
    valid(old('PORT'), portCheck)?.toString() ?? '8000',
    portCheck,
  );
  const publicUrl = await ask(
    given.publicUrl,
    'public URL',
    'Public URL, where people reach the panel',
    keptPublicUrl(old) ?? defaultPublicUrl(behindProxy, host, port),
    publicUrlCheck,
  );
  const database = await ask(
    given.database,
    'database',
    'Database: sqlite (embedded) or a postgres:// URL',
    valid(old('DATABASE_URL'), databaseCheck) ?? 'sqlite',
    databaseCheck,
  );
  if (database !== 'sqlite') await reachDatabase(database);
  const registration = await ask(
    given.registration,
    'registration',
    'Registration: open, closed, or unset (open until the first account, then as the admin sets it)',
    valid(old('REGISTRATION'), registrationCheck) ?? 'unset',
    registrationCheck,
  );
  const trustProxy = behindProxy
    ? behindProxyFlag
      ? '127.0.0.1'
      : (oldProxy ?? '127.0.0.1')
    : null;
  return { host, port, publicUrl, database, registration, trustProxy };
}

/** Checks a flag's value; a bad one is a usage error naming the flag. */
function flag<T>(
  value: string | undefined,
  name: string,
  check: (raw: string) => T,
): T | undefined {
  if (value === undefined) return undefined;
  try {
    return check(value.trim());
  } catch (error) {
    if (error instanceof UsageError) throw new UsageError(`${name}: ${error.message}`);
    throw error;
  }
}

/** A value of the old file that still passes its check, to offer as the default. */
function valid<T>(value: string | undefined, check: (raw: string) => T): T | undefined {
  if (value === undefined) return undefined;
  try {
    return check(value);
  } catch {
    return undefined;
  }
}

function publicUrlCheck(raw: string): string {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (
    url === null ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== ''
  ) {
    throw new UsageError(
      `must be an absolute http(s) URL such as https://panel.example.com, got "${raw}"`,
    );
  }
  return url.href.replace(/\/+$/, '');
}

function hostCheck(raw: string): string {
  const hostName =
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
  if (isIP(raw) === 0 && !hostName.test(raw)) {
    throw new UsageError(
      `must be an IP address or a host name (0.0.0.0, ::, 127.0.0.1), got "${raw}"`,
    );
  }
  return raw;
}

function portCheck(raw: string): number {
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 1 && port <= 65535)) {
    throw new UsageError(`must be a port from 1 to 65535, got "${raw}"`);
  }
  return port;
}

function databaseCheck(raw: string): string {
  if (raw === 'sqlite') return raw;
  if (!/^postgres(ql)?:\/\//.test(raw) || !URL.canParse(raw)) {
    throw new UsageError(
      `must be sqlite or a postgres://user:password@host:5432/database URL, got "${shownDatabase(raw)}"`,
    );
  }
  return raw;
}

function registrationCheck(raw: string): Registration {
  if (raw === 'open' || raw === 'closed' || raw === 'unset') return raw;
  throw new UsageError(`must be open, closed or unset, got "${raw}"`);
}

function yesNoCheck(raw: string): boolean {
  const answer = raw.toLowerCase();
  if (answer === 'yes' || answer === 'y') return true;
  if (answer === 'no' || answer === 'n') return false;
  throw new UsageError(`answer yes or no, got "${raw}"`);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function defaultPublicUrl(behindProxy: boolean, host: string, port: number): string {
  if (behindProxy) return `https://${hostname()}`;
  const reached = host === '0.0.0.0' || host === '::' ? hostname() : host;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}

/**
 * The old file's PUBLIC_URL as the default, unless it was only the one derived from its HOST and
 * PORT: then the new address's own is derived, rather than a URL left pointing at the old one.
 */
function keptPublicUrl(old: (name: string) => string | undefined): string | undefined {
  const url = valid(old('PUBLIC_URL'), publicUrlCheck);
  const host = valid(old('HOST'), hostCheck) ?? '127.0.0.1';
  const port = valid(old('PORT'), portCheck) ?? 8000;
  const derived = defaultPublicUrl(old('TRUST_PROXY') !== undefined, host, port);
  return url === derived ? undefined : url;
}

/** Connects once and asks `SELECT 1`: a URL that does not lead to a database is refused. */
async function reachDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  client.on('error', () => {
    // A connection lost after the check is of no concern here; the check itself awaits below.
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new DatabaseUnreachable(`Cannot reach the database ${shownDatabase(url)}: ${reason}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A database URL fit to show: its password replaced by `***`. */
function shownDatabase(url: string): string {
  if (!URL.canParse(url)) return url.replace(/:[^:@/]*@/, ':***@');
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.href;
}

/** The variables of the old file that setup does not ask about, kept after its own. */
function keptVariables(previous: Record<string, string> | null): [string, string | null][] {
  const names = Object.keys(previous ?? {}).filter((name) => !MANAGED.includes(name));
  if (previous === null || names.length === 0) return [];
  return [
    ['', null],
    ['Kept from the previous file', null],
    ...names.map((name): [string, string] => [name, previous[name] ?? '']),
  ];
}

function report(
  file: string,
  settings: Settings,
  keptSecret: boolean,
  previous: Record<string, string> | null,
): string {
  const kept = Object.keys(previous ?? {}).filter((name) => !MANAGED.includes(name));
  const lines = [
    `Wrote ${file} (mode 0600):`,
    `  HOST=${settings.host}`,
    `  PORT=${settings.port}`,
    `  PUBLIC_URL=${settings.publicUrl}`,
    ...(settings.trustProxy === null ? [] : [`  TRUST_PROXY=${settings.trustProxy}`]),
    settings.database === 'sqlite'
      ? '  database: embedded SQLite (DATABASE_URL unset)'
      : `  DATABASE_URL=${shownDatabase(settings.database)} (reached)`,
    settings.registration === 'unset'
      ? '  registration: open until the first account (the admin), then as the admin sets it'
      : `  REGISTRATION=${settings.registration}`,
    keptSecret
      ? '  JWT_SECRET: kept from the previous file (sessions stay valid)'
      : '  JWT_SECRET: generated (48 random bytes)',
    ...(kept.length === 0 ? [] : [`  kept as they were: ${kept.join(', ')}`]),
    '',
  ];
  const plain = settings.publicUrl.startsWith('http:');
  if (plain && !isLoopback(settings.host)) {
    lines.push(
      `Warning: the panel listens on ${settings.host} over plain HTTP: passwords would cross the`,
      'network in clear. Put it behind a reverse proxy with HTTPS (setup --behind-proxy; see',
      'docs/deploy.md) before others sign in from afar.',
      '',
    );
  }
  if (settings.trustProxy !== null) {
    lines.push(
      `Point the reverse proxy at http://127.0.0.1:${settings.port} (docs/deploy.md shows Caddy and nginx).`,
    );
  }
  lines.push(
    'Next: npm start (it reads this file), or run the panel as a service:',
    '  npm run cli -- service install',
    '',
  );
  return lines.join('\n');
}
