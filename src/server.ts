/**
 * Entry point: read the configuration, build the panel, listen, and close cleanly on SIGINT or
 * SIGTERM, letting the game servers run on (the next panel takes them back); SIGUSR2
 * (`game-panel shutdown --stop-servers`) stops them first; SIGHUP reloads the TLS certificate.
 * A bad setting stops the start with one line naming it.
 */
import { buildApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { reloadTls } from './http/tls.js';
import { claimDataDir } from './panel-pid.js';

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Configuration error: ${error.message}\n`);
  process.exit(1);
}

let serversAtClose: 'keep' | 'stop' = 'keep';
let app: Awaited<ReturnType<typeof buildApp>>;
let release: () => void;
try {
  app = await buildApp(config, { serversAtClose: () => serversAtClose });
  release = claimDataDir(config.dataDir);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Configuration error: ${error.message}\n`);
  process.exit(1);
}

let closing = false;
const shutdown = (signal: NodeJS.Signals): void => {
  if (signal === 'SIGUSR2') serversAtClose = 'stop';
  if (closing) return;
  closing = true;
  app.log.info(
    { signal },
    serversAtClose === 'stop'
      ? 'shutting down; stopping the game servers'
      : 'shutting down; the game servers run on',
  );
  app.close().then(
    () => {
      release();
      process.exit(0);
    },
    (error: unknown) => {
      app.log.error({ err: error }, 'shutdown failed');
      release();
      process.exit(1);
    },
  );
};
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
process.on('SIGUSR2', shutdown);
// With TLS served by the panel, SIGHUP reads the certificate and key again (after a renewal)
// without closing the listener. Without TLS, SIGHUP keeps Node's default: the process ends.
const tlsFiles = config.tls;
if (tlsFiles !== null) {
  process.on('SIGHUP', () => {
    reloadTls(app.server, tlsFiles, app.log);
  });
}

try {
  await app.listen({ host: config.host, port: config.port });
} catch (error) {
  // A setting found wrong only when the panel gets ready (METRICS_ADDRESS taken) is told like
  // any other bad setting.
  if (error instanceof ConfigError) process.stderr.write(`Configuration error: ${error.message}\n`);
  else app.log.fatal({ err: error }, 'cannot listen');
  await app.close();
  release();
  process.exit(1);
}
