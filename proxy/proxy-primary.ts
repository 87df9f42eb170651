import cluster, { type Worker } from 'node:cluster';
import { AggregatorRegistry } from 'prom-client';
import type { Config } from '../shared/config.js';
import { drain, listen } from '../shared/http-server.js';
import { createInternalServer } from '../shared/internal-endpoints.js';
import { createLogger } from '../shared/logger.js';
import { redisReachable } from '../shared/redis-probe.js';
import type { WorkerMessage } from './cluster-worker.js';

/**
 * The primary of `npm run start:proxy` when PROXY_WORKERS ≥ 2: forks that many workers (replacing any that dies),
 * serves `/healthz`, `/readyz` (Redis reachable and every worker has its registry) and `/metrics`
 * (all workers' metrics, summed) on INTERNAL_PORT, never on the public port. On SIGTERM or SIGINT
 * it stops every worker gracefully and exits 0 once they have.
 */
export function runProxyPrimary(config: Config): void {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy');
  const ready = new Set<number>();
  const aggregator = new AggregatorRegistry();
  let stopping = false;

  cluster.on('message', (worker: Worker, message: WorkerMessage) => {
    if (message?.type === 'gatehouse:ready') ready.add(worker.id);
  });
  cluster.on('exit', (worker, code, signal) => {
    ready.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'proxy worker died; starting another');
    cluster.fork();
  });
  for (let i = 0; i < config.proxyWorkers; i++) cluster.fork();

  const server = createInternalServer({
    checks: [
      { name: 'redis', check: () => redisReachable(config.redisUrl!) },
      { name: 'workers', check: () => ready.size === config.proxyWorkers },
    ],
    metrics: async () => ({ contentType: aggregator.contentType, body: await aggregator.clusterMetrics() }),
  });
  void listen(server, config.internalPort).then((port) =>
    logger.info({ port: config.port, internalPort: port, workers: config.proxyWorkers }, 'gatehouse proxy listening'),
  );

  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping proxy workers');
    void drain(server);
    const workers = Object.values(cluster.workers ?? {});
    if (workers.length === 0) process.exit(0);
    for (const worker of workers) worker?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
