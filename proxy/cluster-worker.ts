import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../shared/config.js';
import { startProxyWorker } from './proxy-worker.js';

/** Messages a worker sends its primary over the cluster IPC channel. */
export type WorkerMessage = { type: 'gatehouse:ready' };

/**
 * One of the PROXY_WORKERS (≥ 2) node:cluster workers of `npm run start:proxy`: the data plane
 * ({@link startProxyWorker}), its metrics lent to the primary's sum, a `gatehouse:ready` message to
 * the primary once the first registry snapshot is loaded, and on SIGTERM a graceful stop, then
 * exit 0. SIGINT is left to the primary (a terminal's Ctrl+C reaches every process of the group).
 */
export async function runClusterWorker(config: Config): Promise<void> {
  const worker = await startProxyWorker(config);
  // The primary sums every worker's metrics on INTERNAL_PORT; constructing an AggregatorRegistry is
  // what makes prom-client answer its requests in a worker (setRegistries alone does not).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([worker.metrics]);
  void worker.registryLoaded.then(() => process.send?.({ type: 'gatehouse:ready' } satisfies WorkerMessage));
  process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
  process.once('SIGINT', () => {});
}
