import cluster from 'node:cluster';
import { readProcessConfig } from '../../shared/config/process-config.js';

/**
 * `npm run start:proxy`: the data plane alone (split mode, design.md §2). Needs REDIS_URL. With
 * PROXY_WORKERS=1 it runs in this one process; with more, this primary forks that many workers
 * sharing PORT (node:cluster), restarts those that die and sums their metrics. Either way
 * `/healthz`, `/readyz` and `/metrics` are served on INTERNAL_PORT. Each part is imported only
 * where it runs, so the primary does not load the data plane's modules. A process that cannot
 * start (Redis unreachable, a port taken) says why on stderr and exits 1 (a cluster worker tells
 * its primary, which does). SIGTERM or SIGINT stops it within 20 s (README "Stopping").
 */
async function main(): Promise<void> {
  const config = readProcessConfig('proxy', { requireRedis: true, requireOidc: false });
  if (config.proxyWorkers === 1) await (await import('./standalone-proxy.js')).runStandaloneProxy(config);
  else if (cluster.isPrimary) (await import('./proxy-primary.js')).runProxyPrimary(config);
  else await (await import('./cluster-worker.js')).runClusterWorker(config);
}

main().catch((error: unknown) => {
  process.stderr.write(`gatehouse proxy: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
