import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../../shared/config/config.js';
import { stopOnSignals } from '../../shared/graceful-stop.js';
import { createLogger } from '../../shared/logger.js';
import { startProxyWorker, type ProxyWorker } from './proxy-worker.js';

/**
 * Messages a worker sends its primary over the cluster IPC channel: `listening` once it serves
 * PORT, `ready` once its first registry snapshot and assertion key set are loaded,
 * `start-failed` (with the error's message) when it could not start, just before it exits 1.
 */
export type WorkerMessage =
  | { type: 'gatehouse:listening' }
  | { type: 'gatehouse:ready' }
  | { type: 'gatehouse:start-failed'; reason: string };

/**
 * One of the PROXY_WORKERS (≥ 2) node:cluster workers of `npm run start:proxy`: the data plane
 * ({@link startProxyWorker}), its metrics lent to the primary's sum, and its progress told to the
 * primary ({@link WorkerMessage}); a start failure is told to the primary, which says why and
 * exits. On SIGTERM a graceful stop, bounded (see {@link ProxyWorker.stop}), then exit 0. SIGINT
 * is left to the primary (a terminal's Ctrl+C reaches every process of the group).
 */
export async function runClusterWorker(config: Config): Promise<void> {
  process.on('SIGINT', () => {});
  const worker = await startProxyWorker(config).catch(async (error: unknown) => {
    await tellPrimary({ type: 'gatehouse:start-failed', reason: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  });
  // The primary sums every worker's metrics on INTERNAL_PORT; constructing an AggregatorRegistry is
  // what makes prom-client answer its requests in a worker (setRegistries alone does not).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([worker.metrics]);
  stopOnSignals({ logger: createLogger(config.logLevel, 'gatehouse-proxy').child({ worker: process.pid }), signals: ['SIGTERM'], stop: () => worker.stop() });
  await tellPrimary({ type: 'gatehouse:listening' });
  void worker.loaded.then(() => tellPrimary({ type: 'gatehouse:ready' }));
}

/** Sends `message` to the primary; resolves once it is written (so an exit right after keeps it). */
function tellPrimary(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => process.send!(message, undefined, {}, () => resolve()));
}
