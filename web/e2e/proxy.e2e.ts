/**
 * The panel behind a real reverse proxy, configured as docs/deploy.md says. Behind nginx: the server block is read from the
 * document itself (between its `nginx:begin` and `nginx:end` markers), with only the addresses,
 * ports and certificate paths of this machine put in, and Debian's nginx runs it on free loopback
 * ports. Through it, the browser signs in over https, and a server's live console runs over the
 * proxied WebSocket (a command typed, its answer seen); plain http is redirected to https; and
 * the panel, trusting the proxy (TRUST_PROXY), records the browser's own address, not the
 * proxy's. Behind Caddy: the document's site block, on a loopback port with Caddy's local CA
 * instead of Let's Encrypt, carries the console's WebSocket without any setting of its own.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeTestCa, type Certificate, type TestCa } from '../../test/helpers/certificates.js';
import { blockOfDeployDoc, replacing } from '../../test/helpers/deploy-doc.js';
import { launchBrowser, openTab, type Tab } from './helpers/browser.js';
import { waitForPort } from './helpers/proxy.js';
import { seeInConsole, sendCommand } from './helpers/console.js';
import { gameServerFixture } from './helpers/fixture.js';
import { assertAccessible, register, signIn } from './helpers/journey.js';
import { freePort, startPanel, type E2ePanel } from './helpers/panel.js';

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

/** Where nginx listens, and so where the browser connects from (Linux's source for loopback). */
const CLIENT_ADDRESS = '127.0.0.1';
/**
 * Where nginx connects to the panel from (`proxy_bind`, added around the document's block): an
 * address of its own, so that the panel's answer tells the proxy and the browser apart. The panel
 * trusts it (TRUST_PROXY) and must record CLIENT_ADDRESS, from X-Forwarded-For.
 */
const PROXY_ADDRESS = '127.0.0.3';

/** The nginx block of docs/deploy.md with this machine's values put in. */
function localised(values: {
  panelUrl: string;
  httpPort: number;
  httpsPort: number;
  certificate: Certificate;
}): string {
  return replacing(blockOfDeployDoc('nginx', 'nginx'), [
    [/^ *listen \[::\]:\d+.*\n/gm, ''],
    [/listen 80;/g, `listen ${CLIENT_ADDRESS}:${values.httpPort};`],
    [/listen 443 ssl;/g, `listen ${CLIENT_ADDRESS}:${values.httpsPort} ssl;`],
    [/http:\/\/127\.0\.0\.1:8000/g, values.panelUrl],
    [/\/etc\/letsencrypt\/live\/panel\.example\.org\/fullchain\.pem/g, values.certificate.certFile],
    [/\/etc\/letsencrypt\/live\/panel\.example\.org\/privkey\.pem/g, values.certificate.keyFile],
  ]);
}

describe(
  'the panel behind nginx, as docs/deploy.md configures it',
  { skip: existsSync(NGINX) ? false : `no nginx at ${NGINX} (apt-get install -y nginx)` },
  () => {
    let ca: TestCa;
    const fixture = gameServerFixture();
    let panel: E2ePanel;
    let nginx: ChildProcess | undefined;
    let nginxLog = '';
    let browser: Browser;
    let admin = '';
    let proxyUrl = '';
    let httpPort = 0;
    const tabs: Tab[] = [];

    before(async () => {
      ca = makeTestCa();
      const certificate = ca.issue('proxy');
      httpPort = await freePort();
      const httpsPort = await freePort();
      proxyUrl = `https://${CLIENT_ADDRESS}:${httpsPort}`;
      panel = await startPanel({
        PUBLIC_URL: proxyUrl,
        TRUST_PROXY: PROXY_ADDRESS,
        SANDBOX_READ_ONLY_PATHS: fixture.folder,
      });
      const block = localised({
        panelUrl: panel.url,
        httpPort,
        httpsPort,
        certificate,
      });
      // What Debian's /etc/nginx/nginx.conf gives the files of sites-enabled/, reduced to a
      // foreground process of the test's own, with its files in the test's folder; and the
      // address it connects to the panel from (proxy_bind).
      const dir = ca.dir;
      const conf = path.join(dir, 'nginx.conf');
      writeFileSync(
        conf,
        [
          'daemon off;',
          'master_process off;',
          `pid ${path.join(dir, 'nginx.pid')};`,
          `error_log ${path.join(dir, 'error.log')} warn;`,
          'events { worker_connections 64; }',
          'http {',
          '    access_log off;',
          `    proxy_bind ${PROXY_ADDRESS};`,
          `    client_body_temp_path ${path.join(dir, 'body')};`,
          `    proxy_temp_path ${path.join(dir, 'proxy')};`,
          `    fastcgi_temp_path ${path.join(dir, 'fastcgi')};`,
          `    uwsgi_temp_path ${path.join(dir, 'uwsgi')};`,
          `    scgi_temp_path ${path.join(dir, 'scgi')};`,
          block,
          '}',
          '',
        ].join('\n'),
      );
      nginx = spawn(NGINX, ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', conf], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const log = () => {
        const file = path.join(dir, 'error.log');
        return nginxLog + (existsSync(file) ? readFileSync(file, 'utf8') : '');
      };
      for (const stream of [nginx.stdout, nginx.stderr]) {
        stream?.on('data', (chunk: Buffer) => (nginxLog += chunk.toString()));
      }
      await waitForPort(CLIENT_ADDRESS, httpsPort, nginx, log);

      browser = await launchBrowser();
      admin = await register(panel, 'admin');
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'proxied', displayName: 'Proxied', startCommand: fixture.startCommand },
        admin,
      );
    });
    after(async () => {
      for (const { context } of tabs) await context.close().catch(() => undefined);
      await browser.close();
      if (nginx?.exitCode === null) {
        const exited = new Promise((resolve) => nginx?.once('exit', resolve));
        nginx.kill('SIGQUIT');
        await exited;
      }
      await panel.close();
      fixture.remove();
      ca.remove();
    });

    it('redirects plain http to https', async () => {
      const response = await fetch(`http://${CLIENT_ADDRESS}:${httpPort}/sign-in`, {
        redirect: 'manual',
      });
      assert.equal(response.status, 301);
      assert.equal(
        response.headers.get('location'),
        `https://${CLIENT_ADDRESS}/sign-in`,
        'to the same name on the standard port, as in production',
      );
    });

    it('signs in through the proxy and runs the live console over its WebSocket', async () => {
      const tab = await openTab(browser, proxyUrl, { ignoreHTTPSErrors: true });
      tabs.push(tab);
      const { page, assertClean } = tab;
      const sockets: string[] = [];
      page.on('websocket', (socket) => sockets.push(socket.url()));

      await signIn(page, 'admin');
      await page.goto('/servers/proxied');
      await page.getByRole('heading', { level: 1, name: 'Proxied' }).waitFor();
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await seeInConsole(page, 'Done! pid=');
      await sendCommand(page, 'say hello through nginx');
      await seeInConsole(page, '[Server] hello through nginx');
      assert.ok(sockets.length > 0, 'the console opened a socket');
      for (const url of sockets) {
        assert.ok(url.startsWith(`wss://${CLIENT_ADDRESS}:`), `${url} goes through the proxy`);
      }
      await assertAccessible(page, 'the console through the proxy');
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await page.getByText('Stopped', { exact: true }).waitFor();
      assertClean();

      // The panel believed the proxy about who the client is: the browser's address, not nginx's.
      const { data } = await panel.api<{ data: { address: string | null; outcome: string }[] }>(
        'GET',
        '/api/audit?action=auth.login',
        undefined,
        admin,
      );
      assert.deepEqual(
        data.filter((entry) => entry.outcome === 'ok').map((entry) => entry.address),
        [CLIENT_ADDRESS],
        'the sign-in through the proxy is recorded with the browser’s address',
      );
    });
  },
);

const CADDY = process.env.CADDY_PATH ?? '/usr/bin/caddy';

describe(
  'the panel behind Caddy, as docs/deploy.md configures it',
  { skip: existsSync(CADDY) ? false : `no caddy at ${CADDY} (apt-get install -y caddy)` },
  () => {
    const fixture = gameServerFixture();
    let panel: E2ePanel;
    let caddy: ChildProcess | undefined;
    let caddyLog = '';
    let browser: Browser;
    let admin = '';
    let proxyUrl = '';
    let dir = '';
    const tabs: Tab[] = [];

    before(async () => {
      const httpsPort = await freePort();
      proxyUrl = `https://127.0.0.1:${httpsPort}`;
      panel = await startPanel({
        PUBLIC_URL: proxyUrl,
        TRUST_PROXY: '127.0.0.1',
        SANDBOX_READ_ONLY_PATHS: fixture.folder,
      });
      // The document's site, on a loopback address and port instead of the public name (Caddy
      // then serves a certificate of its own local CA instead of asking Let's Encrypt), kept on
      // loopback (`bind`); the directives inside are the document's. Caddy's state goes to the
      // test's folder, its CA is never installed into the system's trust, and it has no admin
      // endpoint.
      const site = replacing(blockOfDeployDoc('caddyfile', 'caddyfile'), [
        [/^panel\.example\.org \{\n/m, `${proxyUrl} {\n\tbind 127.0.0.1\n`],
        [/reverse_proxy 127\.0\.0\.1:8000/, `reverse_proxy ${panel.url.replace('http://', '')}`],
      ]);
      dir = mkdtempSync(path.join(tmpdir(), 'panel-caddy-'));
      const file = path.join(dir, 'Caddyfile');
      const httpPort = await freePort();
      writeFileSync(
        file,
        `{\n\tadmin off\n\tskip_install_trust\n\thttp_port ${httpPort}\n\tauto_https disable_redirects\n}\n\n${site}`,
      );
      caddy = spawn(CADDY, ['run', '--config', file, '--adapter', 'caddyfile'], {
        env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      for (const stream of [caddy.stdout, caddy.stderr]) {
        stream?.on('data', (chunk: Buffer) => (caddyLog += chunk.toString()));
      }
      await waitForPort('127.0.0.1', httpsPort, caddy, () => caddyLog);

      browser = await launchBrowser();
      admin = await register(panel, 'admin');
      await panel.api(
        'POST',
        '/api/servers/create',
        { name: 'caddied', displayName: 'Behind Caddy', startCommand: fixture.startCommand },
        admin,
      );
    });
    after(async () => {
      for (const { context } of tabs) await context.close().catch(() => undefined);
      await browser.close();
      if (caddy?.exitCode === null) {
        const exited = new Promise((resolve) => caddy?.once('exit', resolve));
        caddy.kill('SIGTERM');
        await exited;
      }
      await panel.close();
      fixture.remove();
      rmSync(dir, { recursive: true, force: true });
    });

    it('signs in through Caddy and runs the live console over the WebSocket it upgrades', async () => {
      const tab = await openTab(browser, proxyUrl, { ignoreHTTPSErrors: true });
      tabs.push(tab);
      const { page, assertClean } = tab;
      const sockets: string[] = [];
      page.on('websocket', (socket) => sockets.push(socket.url()));

      await signIn(page, 'admin');
      await page.goto('/servers/caddied');
      await page.getByRole('heading', { level: 1, name: 'Behind Caddy' }).waitFor();
      await page.getByRole('button', { name: 'Start', exact: true }).click();
      await seeInConsole(page, 'Done! pid=');
      await sendCommand(page, 'say hello through caddy');
      await seeInConsole(page, '[Server] hello through caddy');
      assert.ok(sockets.length > 0, 'the console opened a socket');
      for (const url of sockets) assert.ok(url.startsWith(`${proxyUrl.replace('https', 'wss')}/`));
      await page.getByRole('button', { name: 'Stop', exact: true }).click();
      await page.getByText('Stopped', { exact: true }).waitFor();
      assertClean();
    });
  },
);
