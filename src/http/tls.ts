/**
 * How the panel is reached: TLS served by the panel itself, and what the start-up log says about
 * the transport (docs/deploy.md).
 *
 * - {@link readTlsPair} reads `TLS_CERT_FILE` and `TLS_KEY_FILE` and checks them (PEM, the key
 *   belongs to the certificate, Node accepts the pair); anything wrong is a {@link ConfigError}
 *   naming the variable at fault, without a byte of the key in it.
 * - {@link reloadTls} swaps the pair of a listening HTTPS server (SIGHUP, after a renewal): the
 *   listener and the connections already open stay; a bad new pair is refused, logged, and the
 *   previous one is served on.
 * - {@link transportReport} decides the start-up line about plain HTTP: a warning when people
 *   would send their passwords in clear across a network.
 */
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Server as TlsServer, createSecureContext } from 'node:tls';
import { ConfigError, type Config, type TlsFiles } from '../config.js';
import type { Logger } from '../log.js';

/** What Fastify's `https` option and `setSecureContext` take. */
export interface TlsPair {
  readonly cert: Buffer;
  readonly key: Buffer;
}

/** What a pair is, for the log: never the key, only the certificate's public facts. */
export interface TlsPairSummary {
  readonly subject: string;
  readonly validTo: string;
  readonly fingerprint256: string;
}

/** Reads and checks the pair named by `files`; throws a ConfigError naming the variable at fault. */
export function readTlsPair(files: TlsFiles): TlsPair & { readonly summary: TlsPairSummary } {
  const cert = readPem('TLS_CERT_FILE', files.certFile);
  const key = readPem('TLS_KEY_FILE', files.keyFile);
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(cert);
  } catch {
    throw new ConfigError('TLS_CERT_FILE', `${files.certFile} holds no PEM certificate`);
  }
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(key);
  } catch {
    throw new ConfigError(
      'TLS_KEY_FILE',
      `${files.keyFile} holds no PEM private key (it must not be protected by a passphrase)`,
    );
  }
  if (!certificate.checkPrivateKey(privateKey)) {
    throw new ConfigError(
      'TLS_KEY_FILE',
      `${files.keyFile} is not the key of the certificate in ${files.certFile}`,
    );
  }
  try {
    createSecureContext({ cert, key });
  } catch (error) {
    // OpenSSL's reason (a chain it cannot use, a key too weak for its security level); its
    // messages name the problem, never the key's content.
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError('TLS_CERT_FILE', `${files.certFile} cannot be served: ${reason}`);
  }
  return {
    cert,
    key,
    summary: {
      subject: certificate.subject.replace(/\n/g, ', '),
      validTo: new Date(certificate.validTo).toISOString(),
      fingerprint256: certificate.fingerprint256,
    },
  };
}

function readPem(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    const code =
      error instanceof Error && 'code' in error && typeof error.code === 'string'
        ? error.code
        : 'unknown error';
    throw new ConfigError(variable, `cannot read ${file} (${code})`);
  }
}

/**
 * Reads the pair again and serves it on `server` from the next handshake on. Returns whether it
 * did; a server that is not HTTPS is left alone (false).
 */
export function reloadTls(server: unknown, files: TlsFiles, log: Logger): boolean {
  if (!(server instanceof TlsServer)) return false;
  let pair: ReturnType<typeof readTlsPair>;
  try {
    pair = readTlsPair(files);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.error(
      { variable: error.variable },
      `TLS certificate not reloaded, the previous one is still served: ${error.message}`,
    );
    return false;
  }
  server.setSecureContext({ cert: pair.cert, key: pair.key });
  log.info({ certificate: pair.summary }, 'TLS certificate reloaded');
  return true;
}

/** IPv4 127.0.0.0/8 (also as an IPv4-mapped IPv6 address), `::1` and `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare.endsWith('.localhost')) return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1' || bare.startsWith('::ffff:127.');
  return false;
}

export interface TransportReport {
  readonly level: 'warn' | 'info';
  readonly message: string;
}

/**
 * What the start-up log says about the transport, or null when there is nothing to say: the
 * panel serves TLS, or listens on loopback only (reached through a proxy or an SSH tunnel).
 * Plain HTTP on another address warns, unless `PUBLIC_URL` is https: then a TLS proxy in front
 * is what people reach, and an info line says the panel counts on it.
 */
export function transportReport(
  config: Pick<Config, 'host' | 'port' | 'tls' | 'publicUrl'>,
): TransportReport | null {
  if (config.tls !== null || isLoopbackHost(config.host)) return null;
  const where = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  if (new URL(config.publicUrl).protocol === 'https:') {
    return {
      level: 'info',
      message: `listening on ${where} over plain HTTP behind a TLS proxy (PUBLIC_URL is ${config.publicUrl}): keep this port closed to everyone but the proxy (docs/deploy.md)`,
    };
  }
  return {
    level: 'warn',
    message: `listening on ${where} over plain HTTP: passwords and tokens cross the network in clear. Set TLS_CERT_FILE and TLS_KEY_FILE, or put a TLS proxy in front and set PUBLIC_URL to its https:// address (docs/deploy.md)`,
  };
}
