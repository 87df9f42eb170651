import { Counter, Gauge, Histogram } from 'prom-client';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import { mirrorCount } from '../../shared/mirrored-metrics.js';
import { processMetricsRegistry } from '../../shared/process-metrics.js';
import type { AccessLogEntry } from '../../shared/types.js';
import type { TargetHealth } from '../pool/target-health.js';
import type { TargetHealthBook } from '../pool/target-health-book.js';
import type { UpstreamFailureCounter, UpstreamFailureKind } from '../forward/upstream-errors.js';
import type { RefusalCounter } from './refused-requests.js';

/** Response-time buckets, in seconds (Prometheus base unit): 1 ms to 30 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** The `status_class` label of counts index 0–8: a status's first digit minus one (Node relays 100–999). */
const STATUS_CLASSES = Array.from({ length: 9 }, (_, i) => `${i + 1}xx`);

/**
 * The data plane's Prometheus metrics (prom-client), in a registry of their own:
 * - `gatehouse_requests_total{service,status_class}`: requests matched to a service, by outcome
 *   (a summary record counts for the requests it stands for);
 * - `gatehouse_rate_limited_requests_total{service}`: requests the general rate limit refused, each
 *   counted as it is refused (`service` is empty when no service matched);
 * - `gatehouse_request_duration_seconds`: time from request start to response end;
 * - `gatehouse_upstream_errors_total{service,kind}`: target failures by service id and kind
 *   (`unavailable` → 503, `timeout` → 504, `bad_gateway` → 502 or a response cut off midway);
 * - `gatehouse_access_log_records_shipped_total`, `…_dropped_total`: the access-log pipeline;
 * - once {@link trackTargets} is called, per target of a pool (`target` its url):
 *   `gatehouse_target_healthy{service,target}` (1 while it takes traffic: neither failing its
 *   active checks nor ejected; across workers the lowest), `gatehouse_target_requests_total` and
 *   `gatehouse_target_errors_total` (attempts, retries included, and those that failed);
 * plus Node's process metrics ({@link processMetricsRegistry}).
 */
export class GatewayMetrics implements UpstreamFailureCounter, RefusalCounter {
  readonly registry = processMetricsRegistry();
  /**
   * Requests by service id, then status class ({@link STATUS_CLASSES}), counted here and copied
   * into `gatehouse_requests_total` when scraped: prom-client's `inc` hashes its labels on every
   * call, a cost per request for a value read a few times a minute.
   */
  readonly #requestCounts = new Map<string, Float64Array>();
  /** Refused requests by service id ('' for none), copied into their counter when scraped, as above. */
  readonly #rateLimited = new Map<string, number>();
  readonly #duration: Histogram;
  readonly #upstreamErrors: Counter<'service' | 'kind'>;

  constructor(accessLog?: AccessLogSink) {
    const registers = [this.registry];
    const requestCounts = this.#requestCounts;
    new Counter({
      name: 'gatehouse_requests_total',
      help: 'Requests matched to a service, by status class.',
      labelNames: ['service', 'status_class'],
      registers,
      collect() {
        this.reset();
        for (const [service, counts] of requestCounts) {
          counts.forEach((count, i) => count > 0 && this.inc({ service, status_class: STATUS_CLASSES[i] }, count));
        }
      },
    });
    const rateLimited = this.#rateLimited;
    new Counter({
      name: 'gatehouse_rate_limited_requests_total',
      help: 'Requests refused by the general rate limit (429), by service; empty when no service matched.',
      labelNames: ['service'],
      registers,
      collect() {
        this.reset();
        for (const [service, count] of rateLimited) this.inc({ service }, count);
      },
    });
    this.#duration = new Histogram({ name: 'gatehouse_request_duration_seconds', help: 'Time from request start to response end.', buckets: LATENCY_BUCKETS, registers });
    this.#upstreamErrors = new Counter({ name: 'gatehouse_upstream_errors_total', help: 'Target failures by service: unavailable (503), timeout (504), bad_gateway (502 or a response cut off).', labelNames: ['service', 'kind'], registers });
    if (accessLog) {
      mirrorCount(this.registry, 'gatehouse_access_log_records_shipped_total', 'Access-log records shipped.', () => accessLog.shipped);
      mirrorCount(this.registry, 'gatehouse_access_log_records_dropped_total', 'Access-log records dropped (buffer full while the pipeline was down, or still unshipped when the process stopped).', () => accessLog.dropped);
    }
  }

  /** Reports the targets of `book` (this process's pools) when scraped. */
  trackTargets(book: TargetHealthBook): void {
    const registers = [this.registry];
    const labelNames = ['service', 'target'] as const;
    const perTarget = (metric: Gauge<'service' | 'target'> | Counter<'service' | 'target'>, value: (health: TargetHealth) => number): void => {
      metric.reset();
      for (const health of book.all()) metric.inc({ service: health.serviceId, target: health.url }, value(health));
    };
    new Gauge({
      name: 'gatehouse_target_healthy',
      help: 'Whether a target takes traffic (1) or is failing its active checks or ejected (0).',
      labelNames,
      registers,
      aggregator: 'min',
      collect() {
        perTarget(this, (health) => (health.available ? 1 : 0));
      },
    });
    new Counter({
      name: 'gatehouse_target_requests_total',
      help: 'Requests sent to a target, retries included.',
      labelNames,
      registers,
      collect() {
        perTarget(this, (health) => health.requests);
      },
    });
    new Counter({
      name: 'gatehouse_target_errors_total',
      help: 'Requests to a target that failed: connection failures, 502/503/504, timeouts.',
      labelNames,
      registers,
      collect() {
        perTarget(this, (health) => health.errors);
      },
    });
  }

  /**
   * Counts finished requests from their access-log record: one, or a summary's `count` (its
   * requests were refused at once: their time is not observed).
   */
  observe(record: AccessLogEntry): void {
    let counts = this.#requestCounts.get(record.serviceId);
    if (counts === undefined) this.#requestCounts.set(record.serviceId, (counts = new Float64Array(STATUS_CLASSES.length)));
    const index = Math.floor(record.statusCode / 100) - 1;
    if (record.count !== undefined) {
      counts[index]! += record.count; // a typed array ignores an index outside it
      return;
    }
    counts[index]!++;
    this.#duration.observe(record.responseTimeMs / 1000);
  }

  rateLimited(serviceId: string): void {
    this.#rateLimited.set(serviceId, (this.#rateLimited.get(serviceId) ?? 0) + 1);
  }

  /** Counts one failure of service `serviceId`'s target (see {@link UpstreamFailureKind}). */
  upstreamError(serviceId: string, kind: UpstreamFailureKind): void {
    this.#upstreamErrors.inc({ service: serviceId, kind });
  }
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
