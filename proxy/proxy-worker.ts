import { AggregatorRegistry } from 'prom-client';
import { clientIpResolver } from '../shared/client-ip.js';
import type { Config } from '../shared/config.js';
import { listen } from '../shared/http-server.js';
import { createLogger } from '../shared/logger.js';
import { GatewayMetrics, meteredSink } from '../shared/metrics.js';
import { openBackends } from '../shared/open-backends.js';
import { createAdminHandoff } from './admin-handoff.js';
import { createProxyPlane } from './proxy-plane.js';
import { createPublicServer } from './public-server.js';

/** Messages a worker sends its primary over the cluster IPC channel. */
export type WorkerMessage = { type: 'gatehouse:ready' };

/**
 * One data-plane worker of `npm run start:proxy`: the proxy plane on PORT over Redis backends,
 * gateway-owned paths handed to ADMIN_INTERNAL_URL. Tells the primary it is ready once the first
 * registry snapshot is loaded. On SIGTERM it stops accepting, finishes in-flight requests (up to
 * 10 s), ships its buffered access-log records, and exits 0.
 */
export async function runProxyWorker(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy').child({ worker: process.pid });
  const backends = await openBackends(config, undefined, logger);
  const clientIp = clientIpResolver(config.trustProxy);
  const accessLog = backends.accessLogSink();
  const metrics = new GatewayMetrics(accessLog);
  // The primary sums every worker's metrics on INTERNAL_PORT; constructing an AggregatorRegistry is
  // what makes prom-client answer its requests in a worker (setRegistries alone does not).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([metrics.registry]);
  const handoff = createAdminHandoff(config.adminInternalUrl, clientIp, logger);
  const plane = createProxyPlane({
    ...backends,
    config,
    accessLog: meteredSink(accessLog, metrics),
    clientIp,
    adminPlane: handoff.handle,
    logger,
  });
  const server = createPublicServer(plane);
  await listen(server.server, config.port);
  const unsubscribe = backends.bus.onRegistry(() => {
    process.send?.({ type: 'gatehouse:ready' } satisfies WorkerMessage);
    queueMicrotask(() => unsubscribe());
  });

  process.once('SIGTERM', () => {
    void (async () => {
      await server.close();
      await plane.close();
      await handoff.close();
      await accessLog.close();
      await backends.close();
      logger.info({ shipped: accessLog.shipped, dropped: accessLog.dropped }, 'worker stopped');
      process.exit(0);
    })();
  });
  process.once('SIGINT', () => {}); // the primary decides; a terminal's Ctrl+C reaches it too
}
