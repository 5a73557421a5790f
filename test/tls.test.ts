/**
 * TLS served by the panel (TLS_CERT_FILE, TLS_KEY_FILE) and what the start-up log says about
 * plain HTTP: the panel started as an operator starts it, reached over https with a certificate
 * from a throwaway CA; SIGHUP swaps the certificate without closing the listener and keeps the
 * old one when the new pair is bad; bad files stop the start naming the variable; the warning
 * about plain HTTP on a non-loopback address is there exactly when it should be.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:tls';
import { buildApp } from '../src/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { isLoopbackHost, transportReport } from '../src/http/tls.js';
import { startPanel, testEnvironment, type Scope } from './helpers/app.js';
import { makeTestCa, type Certificate, type TestCa } from './helpers/certificates.js';
import { eventually } from './helpers/factories.js';
import { spawnPanel, startPanelProcess } from './helpers/panel-process.js';

/** The SHA-256 fingerprint of the certificate a new TLS connection to `url` is served. */
function servedFingerprint(url: string, ca: Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), ca, servername: 'localhost' });
    socket.once('secureConnect', () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

const fingerprintOf = (certificate: Certificate): string =>
  new X509Certificate(readFileSync(certificate.certFile)).fingerprint256;

/** GET over https through `agent` (trusting `ca`): status, body, and whether a socket was reused. */
function get(
  url: string,
  ca: Buffer,
  agent?: Agent,
): Promise<{ status: number; body: string; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, ...(agent ? { agent } : {}) }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body, reused: req.reusedSocket });
      });
    });
    req.once('error', reject);
    req.end();
  });
}

describe('TLS served by the panel', () => {
  let ca: TestCa;
  let first: Certificate;
  let second: Certificate;
  const children: ChildProcess[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  before(() => {
    ca = makeTestCa();
    first = ca.issue('first');
    second = ca.issue('second');
  });
  after(async () => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    for (const cleanup of cleanups) await cleanup();
    ca.remove();
  });

  async function environment(env: Record<string, string>): Promise<Record<string, string>> {
    const made = await testEnvironment(env);
    cleanups.push(made.cleanup);
    return made.env;
  }

  it('asks for both files, naming the one missing, and defaults PUBLIC_URL to https', async () => {
    const env = await environment({});
    assert.throws(
      () => loadConfig({ ...env, TLS_CERT_FILE: first.certFile }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'TLS_KEY_FILE',
    );
    assert.throws(
      () => loadConfig({ ...env, TLS_KEY_FILE: first.keyFile }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'TLS_CERT_FILE',
    );
    const config = loadConfig({
      ...env,
      HOST: '0.0.0.0',
      PORT: '8443',
      TLS_CERT_FILE: first.certFile,
      TLS_KEY_FILE: first.keyFile,
    });
    assert.equal(config.publicUrl, 'https://0.0.0.0:8443');
    assert.deepEqual(config.tls, { certFile: first.certFile, keyFile: first.keyFile });
    assert.equal(loadConfig(env).tls, null);
  });

  it('refuses at start a file it cannot read, a file that is no PEM, and a key of another certificate', async () => {
    const env = await environment({});
    const notPem = path.join(ca.dir, 'not-pem.txt');
    writeFileSync(notPem, 'hello\n');
    const cases: [Record<string, string>, string, RegExp][] = [
      [
        { TLS_CERT_FILE: path.join(ca.dir, 'missing.crt'), TLS_KEY_FILE: first.keyFile },
        'TLS_CERT_FILE',
        /cannot read .*missing\.crt \(ENOENT\)/,
      ],
      [
        { TLS_CERT_FILE: first.certFile, TLS_KEY_FILE: path.join(ca.dir, 'missing.key') },
        'TLS_KEY_FILE',
        /cannot read .*missing\.key \(ENOENT\)/,
      ],
      [
        { TLS_CERT_FILE: notPem, TLS_KEY_FILE: first.keyFile },
        'TLS_CERT_FILE',
        /holds no PEM certificate/,
      ],
      [
        { TLS_CERT_FILE: first.certFile, TLS_KEY_FILE: notPem },
        'TLS_KEY_FILE',
        /holds no PEM private key/,
      ],
      [
        { TLS_CERT_FILE: first.certFile, TLS_KEY_FILE: second.keyFile },
        'TLS_KEY_FILE',
        /is not the key of the certificate in .*first\.crt/,
      ],
    ];
    for (const [tls, variable, message] of cases) {
      await assert.rejects(
        buildApp(loadConfig({ ...env, ...tls })),
        (error: unknown) =>
          error instanceof ConfigError &&
          error.variable === variable &&
          message.test(error.message),
        `${variable}: ${String(message)}`,
      );
    }

    // As the operator sees it: one line naming the variable, and no key material in it.
    const child = spawnPanel({
      ...env,
      TLS_CERT_FILE: first.certFile,
      TLS_KEY_FILE: second.keyFile,
    });
    children.push(child);
    let output = '';
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 1, output);
    assert.match(output, /^Configuration error: TLS_KEY_FILE: .*second\.key is not the key/m);
    assert.doesNotMatch(output, /PRIVATE KEY/);
  });

  it('serves https, reloads the certificate on SIGHUP without closing the listener, and keeps the old one when the new pair is bad', async () => {
    // The panel reads the files it is given: copies it may have replaced under it.
    const served = {
      certFile: path.join(ca.dir, 'served.crt'),
      keyFile: path.join(ca.dir, 'served.key'),
    };
    copyFileSync(first.certFile, served.certFile);
    copyFileSync(first.keyFile, served.keyFile);
    const env = await environment({
      TLS_CERT_FILE: served.certFile,
      TLS_KEY_FILE: served.keyFile,
      METRICS_ADDRESS: '127.0.0.1:0',
    });
    const panel = await startPanelProcess(env, (child) => children.push(child));
    assert.match(panel.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    assert.equal((await get(`${panel.url}/api/health`, ca.caPem)).status, 200);
    assert.equal(await servedFingerprint(panel.url, ca.caPem), fingerprintOf(first));

    // The metrics listener keeps plain HTTP on its own address.
    const metricsUrl = /metrics served at (http:\/\/127\.0\.0\.1:\d+)/.exec(panel.output())?.[1];
    assert.ok(metricsUrl, panel.output());
    assert.equal((await fetch(`${metricsUrl}/metrics`)).status, 200);

    // A keep-alive connection opened before the reload is served after it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.caPem });
    assert.equal((await get(`${panel.url}/api/health`, ca.caPem, agent)).status, 200);

    // Renewal: the files are replaced, SIGHUP; new connections get the new certificate.
    copyFileSync(second.certFile, served.certFile);
    copyFileSync(second.keyFile, served.keyFile);
    const pid = panel.child.pid;
    panel.child.kill('SIGHUP');
    await eventually(
      async () =>
        (await servedFingerprint(panel.url, ca.caPem)) === fingerprintOf(second) ? true : undefined,
      'the renewed certificate served',
    );
    assert.match(panel.output(), /TLS certificate reloaded/);
    assert.equal(panel.child.exitCode, null, 'the panel still runs');
    assert.equal(panel.child.pid, pid);
    const again = await get(`${panel.url}/api/health`, ca.caPem, agent);
    assert.deepEqual([again.status, again.reused], [200, true], 'the old connection still works');
    agent.destroy();

    // A bad new pair (the key of another certificate): refused, said why, the old one served on.
    copyFileSync(first.keyFile, served.keyFile);
    panel.child.kill('SIGHUP');
    await eventually(
      () => (panel.output().includes('TLS certificate not reloaded') ? true : undefined),
      'the refusal logged',
    );
    assert.match(
      panel.output(),
      /TLS certificate not reloaded, the previous one is still served: TLS_KEY_FILE: .*served\.key is not the key/,
    );
    assert.equal(await servedFingerprint(panel.url, ca.caPem), fingerprintOf(second));
    assert.equal((await get(`${panel.url}/api/health`, ca.caPem)).status, 200);
    assert.doesNotMatch(panel.output(), /PRIVATE KEY/);

    const exited = new Promise((resolve) => panel.child.once('exit', resolve));
    panel.child.kill('SIGTERM');
    await exited;
  });
});

describe('the start-up log about plain HTTP', () => {
  async function startLog(
    t: Scope,
    env: Record<string, string>,
  ): Promise<{ level: number; msg: string }[]> {
    const lines: string[] = [];
    const panel = await startPanel(
      t,
      { LOG_LEVEL: 'info', ...env },
      { logStream: { write: (line: string) => lines.push(line) } },
    );
    await panel.close();
    return lines.map((line) => JSON.parse(line) as { level: number; msg: string });
  }
  const WARN = 40;

  it('warns when the panel listens without TLS on an address that is not loopback', async (t) => {
    const lines = await startLog(t, { HOST: '0.0.0.0', PORT: '8000' });
    const line = lines.find((entry) => entry.msg.includes('over plain HTTP'));
    assert.ok(line, 'a line about plain HTTP');
    assert.equal(line.level, WARN);
    assert.match(
      line.msg,
      /listening on 0\.0\.0\.0:8000 over plain HTTP: passwords and tokens cross the network in clear.*TLS_CERT_FILE.*docs\/deploy\.md/,
    );
  });

  it('only notes a TLS proxy in front when PUBLIC_URL is https, and says nothing on loopback', async (t) => {
    const behindProxy = await startLog(t, {
      HOST: '0.0.0.0',
      PUBLIC_URL: 'https://panel.example.org',
    });
    const line = behindProxy.find((entry) => entry.msg.includes('over plain HTTP'));
    assert.ok(line);
    assert.ok(line.level < WARN, 'not a warning');
    assert.match(line.msg, /behind a TLS proxy/);

    const loopback = await startLog(t, { HOST: '127.0.0.1' });
    assert.equal(loopback.filter((entry) => entry.msg.includes('over plain HTTP')).length, 0);
  });

  it('decides by the address and the scheme', () => {
    const base = { port: 8000, tls: null, publicUrl: 'http://panel.example.org' } as const;
    const tls = { certFile: '/c', keyFile: '/k' };
    assert.equal(transportReport({ ...base, host: '127.0.0.1' }), null);
    assert.equal(transportReport({ ...base, host: '::1' }), null);
    assert.equal(transportReport({ ...base, host: 'localhost' }), null);
    assert.equal(transportReport({ ...base, host: '0.0.0.0', tls }), null);
    assert.equal(transportReport({ ...base, host: '::' })?.level, 'warn');
    assert.equal(transportReport({ ...base, host: '192.168.1.5' })?.level, 'warn');
    assert.equal(transportReport({ ...base, host: 'panel.example.org' })?.level, 'warn');
    assert.equal(
      transportReport({ ...base, host: '0.0.0.0', publicUrl: 'https://panel.example.org' })?.level,
      'info',
    );
    assert.deepEqual(
      [
        '127.0.0.1',
        '127.3.4.5',
        '::1',
        '[::1]',
        '::ffff:127.0.0.1',
        'LOCALHOST',
        '0.0.0.0',
        '::',
        '10.0.0.1',
        '1.2.3.4',
      ].map(isLoopbackHost),
      [true, true, true, true, true, true, false, false, false, false],
    );
  });
});
