/**
 * `/metrics` (docs/metrics.md): on the panel's port to METRICS_TOKEN's bearer, on
 * METRICS_ADDRESS's own listener without a token, both, or, with neither set, nowhere; nothing
 * is even counted then. Never exposed by accident: no setting serves it to anyone without a
 * token on the panel's port. The start-up log says which.
 */
import type { Config } from '../../config.js';
import type { App } from '../../http/types.js';
import { MetricsListener } from './metrics.listener.js';
import { metricsRoutes } from './metrics.routes.js';
import { PanelMetrics, type MetricsSources } from './metrics.service.js';

export function registerMetrics(
  app: App,
  settings: Config['metrics'],
  sources: MetricsSources,
): void {
  const { token, address } = settings;
  if (token === null && address === null) {
    app.addHook('onReady', (done) => {
      app.log.info(
        'metrics are not served: set METRICS_TOKEN to serve /metrics on this port to that bearer token, or METRICS_ADDRESS (host:port) to serve them on an address of their own (docs/metrics.md)',
      );
      done();
    });
    return;
  }
  const metrics = new PanelMetrics(sources);
  metricsRoutes(app, metrics, { token });
  const listener = address && new MetricsListener({ metrics, address, log: app.log });
  app.addHook('onReady', async () => {
    if (token !== null) {
      app.log.info('metrics served at /metrics on this port, to the METRICS_TOKEN bearer token');
    }
    if (listener) {
      await listener.listen();
      app.log.info({ url: listener.url() }, `metrics served at ${listener.url()}, without a token`);
    }
  });
  app.addHook('onClose', async () => {
    await listener?.close();
  });
}
