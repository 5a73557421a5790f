/**
 * How the panel reaches the Docker engine of a remote node (issue 30): what a connection is,
 * whether it can be used ({@link validateConnection}), a dockerode client for it
 * ({@link engineClient}) and a health probe with a deadline ({@link probeEngine}).
 *
 * An engine API is root on its machine, so there are two ways in and no third: `tcp://host:port`
 * with mutual TLS (the engine's `--tlsverify`; the panel shows a client certificate and trusts
 * only the CA given), or `ssh://user@host[:port]` with a private key, where dockerode runs
 * `docker system dial-stdio` on the node (its docker CLI must be installed there). Plain
 * `tcp://` without TLS is refused. Nothing is read from the environment: dockerode's defaults
 * from `DOCKER_HOST`, `DOCKER_CERT_PATH` or `SSH_AUTH_SOCK` are all overridden.
 *
 * No reason this module writes holds key material: reasons name the address, the part at fault
 * and what to do, never the PEM texts or the key.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import Docker from 'dockerode';
import ssh2, { type ConnectConfig, type ParsedKey } from 'ssh2';
import { withDeadline } from '../runtime/deadline.js';
import { SshDialAgent } from './ssh-dial.js';
import {
  DeadlinePassed,
  failureOf,
  type EngineFailureCode,
  type Endpoint,
} from './engine-failure.js';

export type { EngineFailureCode } from './engine-failure.js';

/** PEM texts of mutual TLS: the CA the engine's certificate is signed by, and the client's pair. */
export interface EngineTls {
  readonly ca: string;
  readonly cert: string;
  readonly key: string;
}

export interface EngineConnection {
  /** `tcp://host:port` (mutual TLS) or `ssh://user@host[:port]`. */
  readonly dockerHost: string;
  /** For `tcp://`: required. */
  readonly tls?: EngineTls | null;
  /** For `ssh://`: the private key the panel signs in with (OpenSSH or PEM, no passphrase). */
  readonly sshKey?: string | null;
  /**
   * For `ssh://`: the node's host key as a known_hosts key (`ssh-ed25519 AAAA…`). When set, a
   * node showing another key is refused; when not, any is accepted, and {@link probeEngine}
   * tells the one it saw, for the caller to pin.
   */
  readonly sshHostKey?: string | null;
}

/** What a node's engine says of itself. */
export interface EngineFacts {
  /** The engine's version, e.g. `20.10.24`. */
  readonly version: string;
  /** The highest Engine API version it speaks, e.g. `1.41`. */
  readonly apiVersion: string;
  /** `linux`, … (the engine's GOOS). */
  readonly os: string;
  /** `amd64`, `arm64`, … (the engine's GOARCH). */
  readonly arch: string;
  /** The distribution, e.g. `Debian GNU/Linux 12 (bookworm)`. */
  readonly operatingSystem: string;
  readonly cpus: number;
  readonly memoryBytes: number;
  /** The node's host name, as the engine tells it. */
  readonly name: string;
  /** For `ssh://`: the host key the node showed (known_hosts form); null for `tcp://`. */
  readonly sshHostKey: string | null;
}

export type EngineProbe =
  | ({ readonly ok: true } & EngineFacts)
  | { readonly ok: false; readonly code: EngineFailureCode; readonly reason: string };

/** {@link engineClient} was handed a connection that {@link validateConnection} refuses. */
export class InvalidEngineConnectionError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidEngineConnectionError';
  }
}

const FORMS = 'tcp://host:2376 (mutual TLS) or ssh://user@host';

/** The endpoint of `dockerHost`, or why it is not one the panel uses. */
function endpointOf(dockerHost: string): Endpoint | string {
  const text = dockerHost.trim();
  if (text === '') return `the engine's address is missing: ${FORMS}`;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'unix' || scheme === 'npipe')
    return `${scheme}:// is an engine on the panel's own machine (the node local); a remote node is ${FORMS}`;
  if (scheme !== 'tcp' && scheme !== 'ssh')
    return `the engine's address must be ${FORMS}${scheme === undefined ? '' : `, not ${scheme}://`}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `the engine's address is not a valid URL: ${FORMS}`;
  }
  if (url.hostname === '') return `the engine's address names no host: ${FORMS}`;
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '')
    return `the engine's address must be only ${scheme}://${scheme === 'ssh' ? 'user@' : ''}host:port, without a path or query`;
  if (url.password !== '')
    return 'the engine address must hold no password: the panel signs in with a key';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (scheme === 'tcp' ? 2376 : 22) : Number(url.port);
  if (port < 1) return 'the engine address names port 0';
  if (scheme === 'tcp') {
    if (url.username !== '')
      return 'a tcp:// engine address names no user: the client certificate says who the panel is';
    return { kind: 'tcp', host, port };
  }
  if (url.username === '') return 'an ssh:// engine address names the user: ssh://user@host';
  let user: string;
  try {
    user = decodeURIComponent(url.username);
  } catch {
    return "the ssh:// address's user name is not valid";
  }
  return { kind: 'ssh', host, port, user };
}

/** The PEM blocks of `text` that are certificates. */
function certificatesIn(text: string): X509Certificate[] | null {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (blocks === null) return null;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return null;
  }
}

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

function tlsProblem(tls: EngineTls | null | undefined): string | null {
  if (tls === null || tls === undefined)
    return 'a tcp:// engine needs mutual TLS (ca, cert and key): an engine API without it gives root on its machine to anyone who reaches the port';
  const missing = (['ca', 'cert', 'key'] as const).filter(
    (part) => typeof tls[part] !== 'string' || tls[part].trim() === '',
  );
  if (missing.length > 0)
    return `the TLS material needs the CA certificate (ca), the client certificate (cert) and its private key (key); missing: ${missing.join(', ')}`;
  const authorities = certificatesIn(tls.ca);
  if (authorities === null) return 'ca is not a PEM certificate (-----BEGIN CERTIFICATE-----)';
  if (!authorities.every((certificate) => certificate.ca))
    return "ca is not a CA certificate: give the CA (ca.pem) that signed the engine's certificate, not the engine's own";
  const client = certificatesIn(tls.cert)?.[0];
  if (client === undefined) return 'cert is not a PEM certificate (-----BEGIN CERTIFICATE-----)';
  if (client.ca) return "cert is a CA's certificate: give the client certificate (cert.pem)";
  const now = Date.now();
  if (Date.parse(client.validTo) < now)
    return `the client certificate expired on ${client.validTo}`;
  if (Date.parse(client.validFrom) > now)
    return `the client certificate is valid only from ${client.validFrom}`;
  const usages = (client as { keyUsage?: string[] }).keyUsage;
  if (Array.isArray(usages) && !usages.includes(CLIENT_AUTH))
    return 'the client certificate is not for client authentication (its extendedKeyUsage lacks clientAuth): the engine would refuse it';
  let key;
  try {
    key = createPrivateKey(tls.key);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    // OpenSSL asks for the passphrase, and Node answers none: "interrupted or cancelled".
    return code === 'ERR_MISSING_PASSPHRASE' ||
      code === 'ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED' ||
      tls.key.includes('ENCRYPTED')
      ? 'the private key (key) is protected by a passphrase, which the panel cannot type: give it without one'
      : 'key is not a PEM private key (-----BEGIN PRIVATE KEY-----, or EC / RSA PRIVATE KEY)';
  }
  if (!client.checkPrivateKey(key))
    return 'the private key (key) is not the one of the client certificate (cert)';
  return null;
}

function sshProblem(conn: EngineConnection): string | null {
  const text = conn.sshKey;
  if (typeof text !== 'string' || text.trim() === '')
    return 'an ssh:// engine needs sshKey: the private key the panel signs in with (OpenSSH or PEM)';
  const parsed = firstKey(ssh2.utils.parseKey(text));
  if (parsed instanceof Error)
    return /passphrase|encrypted/i.test(parsed.message)
      ? 'sshKey is protected by a passphrase, which the panel cannot type: give it without one'
      : 'sshKey is not an OpenSSH or PEM private key';
  if (!parsed.isPrivateKey())
    return "sshKey is a public key: give the private key (the node's authorized_keys holds the public one)";
  if (conn.sshHostKey !== null && conn.sshHostKey !== undefined) {
    const host = firstKey(ssh2.utils.parseKey(conn.sshHostKey));
    if (host instanceof Error || host.isPrivateKey())
      return 'sshHostKey is not a public key as known_hosts holds it (ssh-ed25519 AAAA…)';
  }
  return null;
}

function firstKey(parsed: ParsedKey | ParsedKey[] | Error): ParsedKey | Error {
  return Array.isArray(parsed) ? (parsed[0] ?? new Error('no key')) : parsed;
}

/** Null when `conn` can be used, else the reason it cannot, for a person to act on. */
export function validateConnection(conn: EngineConnection): string | null {
  const endpoint = typeof conn.dockerHost === 'string' ? endpointOf(conn.dockerHost) : FORMS;
  if (typeof endpoint === 'string') return endpoint;
  if (endpoint.kind === 'tcp') {
    if (typeof conn.sshKey === 'string' && conn.sshKey !== '')
      return 'a tcp:// engine takes no sshKey: it is reached with mutual TLS';
    return tlsProblem(conn.tls);
  }
  if (conn.tls !== null && conn.tls !== undefined)
    return 'an ssh:// engine takes no TLS material: the panel signs in with sshKey';
  return sshProblem(conn);
}

/** The known_hosts form of an SSH public key blob: `<type> <base64>`. */
function knownHostsKey(blob: Buffer): string {
  const length = blob.length >= 4 ? blob.readUInt32BE(0) : 0;
  return `${blob.subarray(4, 4 + length).toString('latin1')} ${blob.toString('base64')}`;
}

/**
 * The SSH connections of each node reached over SSH, shared by every client of that node: by
 * address, user, key and pinned host key (a hash of them, so no key is kept as a map key).
 */
const sshAgents = new Map<string, SshDialAgent>();

function sshAgentFor(conn: EngineConnection, user: string, options: ConnectConfig): SshDialAgent {
  const key = createHash('sha256')
    .update([conn.dockerHost, conn.sshKey ?? '', conn.sshHostKey ?? ''].join('\0'))
    .digest('hex');
  let agent = sshAgents.get(key);
  if (agent === undefined) {
    const endpoint = endpointOf(conn.dockerHost);
    if (typeof endpoint === 'string') throw new InvalidEngineConnectionError(endpoint);
    agent = new SshDialAgent({
      ...options,
      host: endpoint.host,
      port: endpoint.port,
      username: user,
      // The handshake of a shared connection is not any one call's: it gets its own limit.
      readyTimeout: SSH_READY_MS,
    });
    sshAgents.set(key, agent);
  }
  return agent;
}

/** SSH's handshake gets this long when a client has no time limit of its own. */
const SSH_READY_MS = 20_000;

function dockerFor(
  conn: EngineConnection,
  timeoutMs: number | null,
  onHostKey?: (key: string) => void,
): Docker {
  const endpoint = endpointOf(conn.dockerHost);
  const invalid = validateConnection(conn);
  if (typeof endpoint === 'string' || invalid !== null)
    throw new InvalidEngineConnectionError(invalid ?? FORMS);
  // Every option dockerode knows is given, so none comes from its defaults (the environment).
  const none: Docker.DockerOptions = {
    socketPath: undefined,
    host: endpoint.host,
    port: endpoint.port,
    protocol: undefined,
    ca: undefined,
    cert: undefined,
    key: undefined,
    username: undefined,
    version: undefined,
    timeout: timeoutMs ?? undefined,
    headers: {},
    sshOptions: undefined,
  };
  if (endpoint.kind === 'tcp') {
    const tls = conn.tls;
    if (!tls) throw new InvalidEngineConnectionError('no TLS material');
    return new Docker({ ...none, protocol: 'https', ca: tls.ca, cert: tls.cert, key: tls.key });
  }
  const pinned =
    conn.sshHostKey === null || conn.sshHostKey === undefined
      ? null
      : firstKey(ssh2.utils.parseKey(conn.sshHostKey));
  const sshOptions: ConnectConfig = {
    privateKey: conn.sshKey ?? undefined,
    agent: undefined,
    agentForward: false,
    tryKeyboard: false,
    readyTimeout: timeoutMs ?? SSH_READY_MS,
    hostVerifier: (key: Buffer) => {
      onHostKey?.(knownHostsKey(key));
      return pinned === null || (!(pinned instanceof Error) && pinned.getPublicSSH().equals(key));
    },
  };
  if (onHostKey === undefined) {
    // A client of the node's: HTTP over dial-stdio streams of shared SSH connections
    // (./ssh-dial.ts), with the socket timeout a TLS client has.
    const docker = new Docker({ ...none, protocol: 'http' });
    // docker-modem hands its `agent` to every request (dockerode's types do not name it).
    Object.assign(docker.modem, { agent: sshAgentFor(conn, endpoint.user, sshOptions) });
    return docker;
  }
  // The probe: an SSH connection of its own, to see the host key the node shows now. No socket
  // timeout: docker-modem would set it on the SSH channel, which has none to set (a TypeError
  // thrown outside the call). The handshake has readyTimeout; the probe has its deadline.
  const docker = new Docker({
    ...none,
    timeout: undefined,
    protocol: 'ssh',
    username: endpoint.user,
    sshOptions,
  });
  // docker-modem merges its own defaults over these (SSH_AUTH_SOCK when DOCKER_HOST is ssh://):
  // set them again, whole.
  Object.assign(docker.modem, { sshOptions });
  return docker;
}

/**
 * A dockerode client of the node's engine. `timeoutMs`: over TLS, how long a connection may stay
 * silent before the call fails; over SSH, how long the handshake may take (a silent call has no
 * limit there: give it a deadline, as {@link probeEngine} does). Null for clients of streams
 * that may stay silent (events, attach, waits). Throws {@link InvalidEngineConnectionError} when
 * {@link validateConnection} refuses `conn`.
 */
export function engineClient(
  conn: EngineConnection,
  { timeoutMs }: { timeoutMs: number | null },
): Docker {
  return dockerFor(conn, timeoutMs);
}

/** GET `path` of the engine's API, its JSON answer; `signal` lets the call go. */
function ask(docker: Docker, path: string, signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve, reject) => {
    docker.modem.dial(
      { path, method: 'GET', statusCodes: { 200: true, 500: 'server error' }, abortSignal: signal },
      (error, data) => {
        if (error) reject(error);
        else resolve(data);
      },
    );
  });
}

/**
 * Asks the node's engine who it is (`/version`, `/info`) within `deadlineMs`; never throws. A
 * failure comes with a code and a reason a person can act on.
 */
export async function probeEngine(
  conn: EngineConnection,
  { deadlineMs }: { deadlineMs: number },
): Promise<EngineProbe> {
  const invalid = validateConnection(conn);
  const endpoint = endpointOf(conn.dockerHost);
  if (invalid !== null || typeof endpoint === 'string')
    return { ok: false, code: 'NODE_INVALID', reason: invalid ?? FORMS };
  let hostKey: string | null = null;
  const docker = dockerFor(conn, deadlineMs, (key) => {
    hostKey = key;
  });
  const abort = new AbortController();
  try {
    const [version, info] = await withDeadline(
      Promise.all([ask(docker, '/version', abort.signal), ask(docker, '/info', abort.signal)]),
      deadlineMs,
      () => new DeadlinePassed(),
    );
    const field = (answer: unknown, name: string): unknown =>
      answer !== null && typeof answer === 'object'
        ? (answer as Record<string, unknown>)[name]
        : undefined;
    const text = (value: unknown) => (typeof value === 'string' ? value : '');
    const number = (value: unknown) => (typeof value === 'number' ? value : 0);
    return {
      ok: true,
      version: text(field(version, 'Version')),
      apiVersion: text(field(version, 'ApiVersion')),
      os: text(field(version, 'Os')),
      arch: text(field(version, 'Arch')),
      operatingSystem: text(field(info, 'OperatingSystem')),
      cpus: number(field(info, 'NCPU')),
      memoryBytes: number(field(info, 'MemTotal')),
      name: text(field(info, 'Name')),
      sshHostKey: hostKey,
    };
  } catch (error) {
    return { ok: false, ...failureOf(error, endpoint, deadlineMs) };
  } finally {
    // Whatever is still under way (the other call, after one failed) is let go.
    abort.abort();
  }
}
