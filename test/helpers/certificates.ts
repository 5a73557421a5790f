/**
 * Throwaway certificates made with the system's openssl, as an operator's CA would issue them:
 * a CA, and certificates it signs — for a server (by default for `localhost`, 127.0.0.1 and
 * 127.0.0.2) or for a client (mutual TLS, as a Docker engine's `--tlsverify` asks). Shared by
 * the API tests (test/tls.test.ts), the journeys (web/e2e/tls.e2e.ts, web/e2e/proxy.e2e.ts) and
 * the Docker engines that stand in for remote nodes (test/helpers/docker-nodes.ts).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Certificate {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface IssueOptions {
  /** `server` (the default) for a TLS server, `client` for a client of mutual TLS. */
  readonly usage?: 'server' | 'client';
  /** subjectAltName entries, e.g. `IP:10.231.1.2`; a server's default is localhost's names. */
  readonly altNames?: readonly string[];
}

export interface TestCa {
  /** The folder everything is written to. */
  readonly dir: string;
  /** The CA's certificate (PEM), for a client to trust. */
  readonly caPem: Buffer;
  readonly caFile: string;
  /** A certificate signed by the CA, written as `<name>.crt` and `<name>.key`. */
  issue(name: string, options?: IssueOptions): Certificate;
  remove(): void;
}

export interface TestCaOptions {
  /**
   * The CA's folder: its `ca.crt` and `ca.key` are used when there, else made there. Without
   * it, a new temporary folder.
   */
  readonly dir?: string;
  /** How long the CA and what it issues are valid: 2 days unless told. */
  readonly days?: number;
  /** The CA's common name. */
  readonly name?: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** EC P-256 keys: quick to make, and what certbot issues by default. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

const LOCALHOST = ['DNS:localhost', 'IP:127.0.0.1', 'IP:127.0.0.2'];

export function makeTestCa(options: TestCaOptions = {}): TestCa {
  const days = String(options.days ?? 2);
  let dir: string;
  if (options.dir === undefined) {
    dir = mkdtempSync(path.join(tmpdir(), 'panel-tls-'));
  } else {
    dir = options.dir;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  }
  const caFile = path.join(dir, 'ca.crt');
  if (!existsSync(caFile) || !existsSync(path.join(dir, 'ca.key'))) {
    openssl(
      [
        'req',
        '-x509',
        ...NEW_KEY,
        '-keyout',
        'ca.key',
        '-out',
        'ca.crt',
        '-days',
        days,
        '-subj',
        `/CN=${options.name ?? 'Game panel test CA'}`,
        '-addext',
        'basicConstraints=critical,CA:TRUE',
        '-addext',
        'keyUsage=critical,keyCertSign,cRLSign',
      ],
      dir,
    );
  }
  return {
    dir,
    caFile,
    caPem: readFileSync(caFile),
    issue(name, { usage = 'server', altNames } = {}) {
      const names = altNames ?? (usage === 'server' ? LOCALHOST : []);
      writeFileSync(
        path.join(dir, `${name}.ext`),
        [
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature',
          `extendedKeyUsage=${usage === 'server' ? 'serverAuth' : 'clientAuth'}`,
          ...(names.length > 0 ? [`subjectAltName=${names.join(',')}`] : []),
          '',
        ].join('\n'),
      );
      openssl(
        [
          'req',
          ...NEW_KEY,
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.csr`,
          '-subj',
          `/CN=${name}`,
        ],
        dir,
      );
      openssl(
        [
          'x509',
          '-req',
          '-in',
          `${name}.csr`,
          '-CA',
          'ca.crt',
          '-CAkey',
          'ca.key',
          '-CAcreateserial',
          '-days',
          days,
          '-extfile',
          `${name}.ext`,
          '-out',
          `${name}.crt`,
        ],
        dir,
      );
      return { certFile: path.join(dir, `${name}.crt`), keyFile: path.join(dir, `${name}.key`) };
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
