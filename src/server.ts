/**
 * Entry point: read the configuration (the configuration file, then the environment), build the
 * panel, listen, and close cleanly on SIGINT or SIGTERM, letting the game servers run on (the
 * next panel takes them back); SIGUSR2 (`game-panel shutdown --stop-servers`) stops them first;
 * SIGHUP reloads the TLS certificate. A bad setting stops the start with one line naming it,
 * before anything is written.
 */
import { buildApp } from './app.js';
import { ConfigError, type Config } from './config.js';
import { loadPanelConfig, SYSTEM_CONFIG_FILE, type PanelConfig } from './config-file.js';
import { reloadTls } from './http/tls.js';
import { claimDataDir } from './panel-pid.js';
import { openLine } from './start-message.js';

let loaded: PanelConfig;
try {
  loaded = loadPanelConfig();
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  process.stderr.write(`Configuration error: ${error.message}\n`);
  process.exit(1);
}
const config: Config = loaded.config;

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

if (loaded.file === null) {
  app.log.info(
    `no configuration file (neither ${SYSTEM_CONFIG_FILE} nor .env here, and PANEL_CONFIG unset): settings come from the environment alone`,
  );
} else {
  app.log.info(`configuration read from ${loaded.file}`);
}
for (const warning of loaded.warnings) app.log.warn(warning);

let closing = false;
/** Read through a call: a signal handler may have set it while the start awaited. */
const isClosing = (): boolean => closing;
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
  // The stop sequences first, as long as they take; then the close.
  app
    .releaseServers()
    .then(() => app.close())
    .then(
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

let listeningAt: string;
try {
  listeningAt = await app.listen({ host: config.host, port: config.port });
} catch (error) {
  // A setting found wrong only when the panel gets ready (METRICS_ADDRESS taken) is told like
  // any other bad setting.
  if (error instanceof ConfigError) process.stderr.write(`Configuration error: ${error.message}\n`);
  else app.log.fatal({ err: error }, 'cannot listen');
  await app.close();
  release();
  process.exit(1);
}
// Last: the one line a person starting the panel needs. A signal may already have closed the
// panel (and its database) meanwhile: then there is nobody to tell.
try {
  app.log.info(openLine(config, listeningAt, await app.accountsExist()));
} catch (error) {
  if (!isClosing()) throw error;
}
