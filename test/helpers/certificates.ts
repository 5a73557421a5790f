/**
 * Throwaway certificates made with the system's openssl, as an operator's CA would issue them:
 * a CA, and server certificates it signs for `localhost`, 127.0.0.1 and 127.0.0.2. Shared by the
 * API tests (test/tls.test.ts) and the journeys (web/e2e/tls.e2e.ts, web/e2e/proxy.e2e.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface Certificate {
  readonly certFile: string;
  readonly keyFile: string;
}

export interface TestCa {
  /** The folder everything is written to. */
  readonly dir: string;
  /** The CA's certificate (PEM), for a client to trust. */
  readonly caPem: Buffer;
  readonly caFile: string;
  /** A server certificate signed by the CA, written as `<name>.crt` and `<name>.key`. */
  issue(name: string): Certificate;
  remove(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** EC P-256 keys: quick to make, and what certbot issues by default. */
const NEW_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function makeTestCa(): TestCa {
  const dir = mkdtempSync(path.join(tmpdir(), 'panel-tls-'));
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
      '2',
      '-subj',
      '/CN=Game panel test CA',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  const caFile = path.join(dir, 'ca.crt');
  return {
    dir,
    caFile,
    caPem: readFileSync(caFile),
    issue(name) {
      writeFileSync(
        path.join(dir, `${name}.ext`),
        [
          'basicConstraints=CA:FALSE',
          'keyUsage=critical,digitalSignature',
          'extendedKeyUsage=serverAuth',
          'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:127.0.0.2',
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
          '2',
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
