/**
 * The panel's metrics, in the Prometheus text format (docs/metrics.md): HTTP requests by route
 * pattern, open console sockets, servers by status and each server's CPU, memory and disk use,
 * plus the process metrics prom-client gathers.
 *
 * Everything lives in a registry of its own, never prom-client's global one: one process may
 * build several panels (the tests do). Server and console figures are read when scraped, never
 * polled in between.
 */
import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type CollectFunction,
} from 'prom-client';
import { SERVER_STATUSES } from '../../domain/server.js';
import type { ServerReading } from '../servers/servers.service.js';

export const METRICS_PREFIX = 'game_panel_';

/** The route label of a request that matched no route. */
export const UNMATCHED_ROUTE = 'unmatched';

/** Where the figures read at scrape time come from. */
export interface MetricsSources {
  /** Every server's status and use (the servers service, acting for the panel itself). */
  readonly servers: { readings(): Promise<readonly ServerReading[]> };
  /** Console sockets open now (the console hub). */
  readonly consoles: { openSockets(): number };
}

export class PanelMetrics {
  readonly #registry = new Registry();
  readonly #requests: Counter<'method' | 'route' | 'status_code'>;
  readonly #durations: Histogram<'method' | 'route' | 'status_code'>;
  /** The readings of the scrape under way, shared by the gauges that need them. */
  #readings: Promise<readonly ServerReading[]> | null = null;
  readonly #sources: MetricsSources;

  constructor(sources: MetricsSources) {
    this.#sources = sources;

    const registers = [this.#registry];
    collectDefaultMetrics({ register: this.#registry, prefix: METRICS_PREFIX });
    const labelNames = ['method', 'route', 'status_code'] as const;
    this.#requests = new Counter({
      name: `${METRICS_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames,
      registers,
    });
    this.#durations = new Histogram({
      name: `${METRICS_PREFIX}http_request_duration_seconds`,
      help: 'Time to answer HTTP requests, by method, route pattern and status code',
      labelNames,
      registers,
    });
    new Gauge({
      name: `${METRICS_PREFIX}console_sockets`,
      help: 'Console sockets open now',
      registers,
      collect() {
        this.set(sources.consoles.openSockets());
      },
    });
    const serversGauge = (
      name: string,
      help: string,
      labelName: 'status' | 'server',
      fill: (gauge: Gauge<typeof labelName>, readings: readonly ServerReading[]) => void,
    ) => {
      const read = this.#read.bind(this);
      const collect: CollectFunction<Gauge<typeof labelName>> = async function () {
        const readings = await read();
        // Reset: a deleted server's series goes away.
        this.reset();
        fill(this, readings);
      };
      new Gauge({
        name: `${METRICS_PREFIX}${name}`,
        help,
        labelNames: [labelName],
        registers,
        collect,
      });
    };
    serversGauge('servers', 'Servers, by status', 'status', (gauge, readings) => {
      for (const status of SERVER_STATUSES) gauge.set({ status }, 0);
      for (const reading of readings) gauge.inc({ status: reading.status });
    });
    serversGauge(
      'server_cpu_percent',
      "A server's CPU use since its previous reading (100 is one full core)",
      'server',
      (gauge, readings) => {
        for (const { name, usage } of readings) {
          if (usage) gauge.set({ server: name }, usage.cpuPercent);
        }
      },
    );
    serversGauge(
      'server_memory_bytes',
      "Resident memory of a server's processes",
      'server',
      (gauge, readings) => {
        for (const { name, usage } of readings) {
          if (usage) gauge.set({ server: name }, usage.memoryBytes);
        }
      },
    );
    serversGauge('server_disk_bytes', "Bytes in a server's folder", 'server', (gauge, readings) => {
      for (const { name, diskBytes } of readings) {
        if (diskBytes !== null) gauge.set({ server: name }, diskBytes);
      }
    });
  }

  /**
   * The servers' readings, read once per scrape: the gauges of one scrape are collected in the
   * same turn, and share the reading under way.
   */
  #read(): Promise<readonly ServerReading[]> {
    if (this.#readings) return this.#readings;
    const readings = this.#sources.servers.readings();
    this.#readings = readings;
    const forget = () => {
      if (this.#readings === readings) this.#readings = null;
    };
    readings.then(forget, forget);
    return readings;
  }

  /**
   * Counts one answered request. `route` is the route's pattern as registered (never the URL,
   * which may carry ids and secrets), or {@link UNMATCHED_ROUTE}.
   */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    const labels = { method, route, status_code: String(statusCode) };
    this.#requests.inc(labels);
    this.#durations.observe(labels, seconds);
  }

  /** The content type of {@link render}'s text. */
  get contentType(): string {
    return this.#registry.contentType;
  }

  /** Every metric, in the Prometheus text format. */
  render(): Promise<string> {
    return this.#registry.metrics();
  }
}
