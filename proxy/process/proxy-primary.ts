import { AggregatorRegistry, Counter, Registry } from 'prom-client';
import type { Config } from '../../shared/config/config.js';
import { STOP_DEADLINE_MS, stopOnSignals } from '../../shared/graceful-stop.js';
import { drain, listen } from '../../shared/http/http-server.js';
import { createInternalServer } from '../../shared/http/internal-endpoints.js';
import { createLogger } from '../../shared/logger.js';
import { redisReachable } from '../../shared/backends/redis/connection/redis-probe.js';
import { WorkerPool } from './worker-pool.js';

/**
 * The bound on the primary's whole stop, in ms: its workers get SIGTERM at once and exit by
 * {@link STOP_DEADLINE_MS} on their own; any still running 2 s later is killed and the primary
 * exits 1. Well under the 30 s a Kubernetes-style stop allows before SIGKILL.
 */
export const PRIMARY_STOP_DEADLINE_MS = STOP_DEADLINE_MS + 2_000;

/**
 * The primary of `npm run start:proxy` when PROXY_WORKERS ≥ 2: runs a {@link WorkerPool} of that
 * many workers and serves on INTERNAL_PORT (never on the public port) `/healthz`, `/readyz`
 * (Redis reachable and every worker has its registry and assertion keys) and `/metrics`: all
 * workers' metrics, summed, plus its own `gatehouse_worker_restarts_total`. A worker that cannot start, or
 * INTERNAL_PORT taken, stops everything: the reason on stderr, exit 1. On SIGTERM or SIGINT it
 * stops every worker gracefully and exits 0 once they have (1 if one did not stop cleanly),
 * within {@link PRIMARY_STOP_DEADLINE_MS}.
 */
export function runProxyPrimary(config: Config): void {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy');
  const own = new Registry();
  const restarts = new Counter({ name: 'gatehouse_worker_restarts_total', help: 'Proxy workers replaced after dying.', registers: [own] });
  const pool = new WorkerPool({ size: config.proxyWorkers, logger, onRestart: () => restarts.inc() });
  const aggregator = new AggregatorRegistry();
  const server = createInternalServer({
    checks: [
      { name: 'redis', check: () => redisReachable(config.redis!) },
      { name: 'workers', check: () => pool.ready },
    ],
    metrics: async () => ({ contentType: aggregator.contentType, body: `${await aggregator.clusterMetrics()}\n${await own.metrics()}` }),
  });
  const internalPort = listen(server, config.internalPort).catch((error: Error) => {
    throw new Error(`INTERNAL_PORT ${config.internalPort}: ${error.message}`, { cause: error });
  });
  Promise.all([internalPort, pool.started]).then(
    ([port]) => logger.info({ port: config.port, internalPort: port, workers: config.proxyWorkers }, 'gatehouse proxy listening'),
    (error: Error) => void failToStart(error, pool),
  );
  stopOnSignals({
    logger,
    deadlineMs: PRIMARY_STOP_DEADLINE_MS,
    onDeadline: () => pool.kill(),
    async stop() {
      const [, clean] = await Promise.all([drain(server), pool.stop()]);
      if (!clean) throw new Error('a proxy worker did not stop cleanly');
    },
  });
}

/** Says why on stderr, stops the workers that did start (bounded like a stop), and exits 1. */
async function failToStart(error: Error, pool: WorkerPool): Promise<void> {
  process.stderr.write(`gatehouse proxy: failed to start: ${error.message}\n`);
  const deadline = setTimeout(() => pool.kill(), STOP_DEADLINE_MS);
  await pool.stop();
  clearTimeout(deadline);
  process.exit(1);
}
