import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AccessLogSink } from './access-log-sink.js';
import type { AccessLogEntry } from './types.js';

/** Response-time buckets, in seconds (Prometheus base unit): 1 ms to 30 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The data plane's Prometheus metrics (prom-client), in a registry of their own:
 * - `gatehouse_requests_total{service,status_class}`: requests matched to a service, by outcome;
 * - `gatehouse_request_duration_seconds`: time from request start to response end;
 * - `gatehouse_upstream_errors_total{kind}`: 502/503/504 the gateway made for a failing target;
 * - `gatehouse_access_log_records_shipped_total`, `…_dropped_total`: the access-log pipeline;
 * plus Node's process metrics (RSS, event-loop lag, GC).
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly #requests: Counter<'service' | 'status_class'>;
  readonly #duration: Histogram;
  readonly #upstreamErrors: Counter<'kind'>;

  constructor(accessLog?: AccessLogSink) {
    const registers = [this.registry];
    this.#requests = new Counter({ name: 'gatehouse_requests_total', help: 'Requests matched to a service, by status class.', labelNames: ['service', 'status_class'], registers });
    this.#duration = new Histogram({ name: 'gatehouse_request_duration_seconds', help: 'Time from request start to response end.', buckets: LATENCY_BUCKETS, registers });
    this.#upstreamErrors = new Counter({ name: 'gatehouse_upstream_errors_total', help: 'Responses the gateway made because a target failed (unavailable, timeout, bad gateway).', labelNames: ['kind'], registers });
    if (accessLog) {
      mirrorCount(this.registry, 'gatehouse_access_log_records_shipped_total', 'Access-log records shipped.', () => accessLog.shipped);
      mirrorCount(this.registry, 'gatehouse_access_log_records_dropped_total', 'Access-log records dropped (buffer full while the pipeline was down, or still unshipped when the process stopped).', () => accessLog.dropped);
    }
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts one finished request from its access-log record. */
  observe(record: AccessLogEntry): void {
    this.#requests.inc({ service: record.serviceId, status_class: `${Math.floor(record.statusCode / 100)}xx` });
    this.#duration.observe(record.responseTimeMs / 1000);
  }

  /** Counts a gateway-made error response for a failing target (`unavailable`, `timeout`, `bad_gateway`). */
  upstreamError(kind: string): void {
    this.#upstreamErrors.inc({ kind });
  }
}

/** A counter whose value is read from `source` at scrape time. */
function mirrorCount(registry: Registry, name: string, help: string, source: () => number): void {
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(source());
    },
  });
}

/**
 * An access-log sink that also feeds {@link GatewayMetrics}: every record the data plane writes is
 * one finished request, so metrics and access log count the same thing.
 */
export function meteredSink(sink: AccessLogSink, metrics: GatewayMetrics): AccessLogSink {
  return {
    write(record) {
      metrics.observe(record);
      sink.write(record);
    },
    flush: () => sink.flush(),
    close: () => sink.close(),
    get shipped() {
      return sink.shipped;
    },
    get dropped() {
      return sink.dropped;
    },
  };
}
