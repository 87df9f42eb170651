import type { Registry } from 'prom-client';
import { logAccessLogTotals } from '../../shared/backends/access-log-sink.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import { clientIpResolver } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import type { ReadinessCheck } from '../../shared/http/internal-endpoints.js';
import { createLogger } from '../../shared/logger.js';
import { createAdminHandoff } from '../forward/admin-handoff.js';
import { GatewayMetrics } from '../pipeline/gateway-metrics.js';
import { startProxyPlane } from './start-proxy-plane.js';

/** A running data plane on PORT: what its process wrapper (standalone or cluster worker) needs. */
export interface ProxyWorker {
  /** Its Prometheus metrics (requests, latency, upstream errors, access-log shipping, process). */
  readonly metrics: Registry;
  /** `redis` (reachable), `registry` and `assertion-keys` (a snapshot of each is loaded), for `/readyz`. */
  readonly readiness: readonly ReadinessCheck[];
  /**
   * Resolves once the first registry snapshot and the first assertion key set are loaded (the
   * route table is in place, and requests with a caller can be signed: design.md §4.7).
   */
  readonly loaded: Promise<void>;
  /**
   * Graceful stop, bounded whatever Redis does (README "Stopping"): stops accepting, finishes
   * in-flight requests (up to 10 s), ships the buffered access-log records (trying for up to 5 s
   * while Redis is away, then dropping the rest), closes Redis (about 1.5 s at most), and logs how
   * many records were shipped and dropped. Resolves when all of that is done.
   */
  stop(): Promise<void>;
}

/**
 * Starts the data plane of `npm run start:proxy` in this process ({@link startProxyPlane}) over the
 * Redis backends (REDIS_URL), gateway-owned paths handed to ADMIN_INTERNAL_URL. Resolves once it
 * listens, whether Redis answers yet or not (it is not ready until it does). Throws if PORT cannot
 * be bound (the message names PORT).
 */
export async function startProxyWorker(config: Config): Promise<ProxyWorker> {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy').child({ worker: process.pid });
  // Not waiting for Redis: a proxy that cannot reach it stays up and not ready (its /readyz says
  // which check fails), reconnecting with backoff, instead of exiting into a restart loop.
  const backends = await openBackends(config, logger, undefined, { startupTimeoutMs: 0 });
  const handoff = createAdminHandoff(config, clientIpResolver(config.trustProxy), logger);
  const metrics = new GatewayMetrics(backends.accessLogSink());
  const plane = await startProxyPlane({ config, backends, adminPlane: handoff.handle, metrics, logger });
  const loaded = Promise.all([
    firstCall((listener) => backends.bus.onRegistry(listener)),
    firstCall((listener) => backends.bus.onAssertionKeys(listener)),
  ]).then(() => undefined);
  return {
    metrics: metrics.registry,
    readiness: backends.readiness,
    loaded,
    async stop() {
      await plane.close();
      await handoff.close();
      await backends.close();
      logAccessLogTotals(logger, backends.accessLogSink(), 'proxy worker stopped');
    },
  };
}

/** Resolves on the first call of a listener given to `subscribe`, then unsubscribes it. */
function firstCall(subscribe: (listener: () => void) => () => void): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribe = subscribe(() => {
      resolve();
      queueMicrotask(() => unsubscribe());
    });
  });
}
