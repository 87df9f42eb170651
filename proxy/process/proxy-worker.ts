import type { Registry } from 'prom-client';
import { logAccessLogTotals } from '../../shared/backends/access-log-sink.js';
import { clientIpResolver } from '../../shared/client-ip.js';
import type { Config } from '../../shared/config.js';
import type { ReadinessCheck } from '../../shared/internal-endpoints.js';
import { listen } from '../../shared/http-server.js';
import { createLogger } from '../../shared/logger.js';
import { GatewayMetrics, meteredSink } from '../gateway-metrics.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import { createAdminHandoff } from '../admin-handoff.js';
import { createProxyPlane } from '../proxy-plane.js';
import { createPublicServer } from './public-server.js';

/** A running data plane on PORT: what its process wrapper (standalone or cluster worker) needs. */
export interface ProxyWorker {
  /** Its Prometheus metrics (requests, latency, upstream errors, access-log shipping, process). */
  readonly metrics: Registry;
  /** `redis` (reachable) and `registry` (a snapshot is loaded), for `/readyz`. */
  readonly readiness: readonly ReadinessCheck[];
  /** Resolves once the first registry snapshot is loaded (the route table is in place). */
  readonly registryLoaded: Promise<void>;
  /**
   * Graceful stop, bounded whatever Redis does (README "Stopping"): stops accepting, finishes
   * in-flight requests (up to 10 s), ships the buffered access-log records (trying for up to 5 s
   * while Redis is away, then dropping the rest), closes Redis (about 1.5 s at most), and logs how
   * many records were shipped and dropped. Resolves when all of that is done.
   */
  stop(): Promise<void>;
}

/**
 * Starts the data plane of `npm run start:proxy` in this process: the proxy plane on PORT over the
 * Redis backends (REDIS_URL), gateway-owned paths handed to ADMIN_INTERNAL_URL. Resolves once it
 * listens. Throws if Redis does not answer at start, or if PORT cannot be bound (the message names PORT).
 */
export async function startProxyWorker(config: Config): Promise<ProxyWorker> {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy').child({ worker: process.pid });
  const backends = await openBackends(config, undefined, logger);
  const clientIp = clientIpResolver(config.trustProxy);
  const accessLog = backends.accessLogSink();
  const metrics = new GatewayMetrics(accessLog);
  const handoff = createAdminHandoff(config.adminInternalUrl, config.publicUrl, clientIp, logger);
  const plane = createProxyPlane({
    ...backends,
    config,
    accessLog: meteredSink(accessLog, metrics),
    upstreamFailures: metrics,
    clientIp,
    adminPlane: handoff.handle,
    logger,
  });
  const registryLoaded = new Promise<void>((resolve) => {
    const unsubscribe = backends.bus.onRegistry(() => {
      resolve();
      queueMicrotask(() => unsubscribe());
    });
  });
  const server = createPublicServer(plane);
  await listen(server.server, config.port).catch((error: Error) => {
    throw new Error(`PORT ${config.port}: ${error.message}`, { cause: error });
  });
  return {
    metrics: metrics.registry,
    readiness: backends.readiness,
    registryLoaded,
    async stop() {
      await server.close();
      await plane.close();
      await handoff.close();
      await accessLog.close();
      await backends.close();
      logAccessLogTotals(logger, accessLog, 'proxy worker stopped');
    },
  };
}
