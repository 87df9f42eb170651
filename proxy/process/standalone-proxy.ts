import type { Config } from '../../shared/config/config.js';
import { stopOnSignals } from '../../shared/graceful-stop.js';
import { drain, listen } from '../../shared/http/http-server.js';
import { createInternalServer } from '../../shared/http/internal-endpoints.js';
import { createLogger } from '../../shared/logger.js';
import { startProxyWorker, type ProxyWorker } from './proxy-worker.js';

/**
 * `npm run start:proxy` with PROXY_WORKERS=1: the data plane in this one process, no cluster
 * primary beside it (a primary is a whole second Node process, ~80 MB of RSS, for nothing to
 * balance). `/healthz`, `/readyz` (Redis reachable, registry and assertion keys loaded) and
 * `/metrics` are served on INTERNAL_PORT, never on the public port. On SIGTERM or SIGINT: graceful
 * stop (bounded, see {@link ProxyWorker.stop}), then exit 0. A crash exits the process; the
 * process manager that started it restarts it.
 */
export async function runStandaloneProxy(config: Config): Promise<void> {
  const logger = createLogger(config.logLevel, 'gatehouse-proxy');
  const worker = await startProxyWorker(config);
  const server = createInternalServer({
    checks: worker.readiness,
    metrics: async () => ({ contentType: worker.metrics.contentType, body: await worker.metrics.metrics() }),
  });
  const internalPort = await listen(server, config.internalPort);
  logger.info({ port: config.port, internalPort, workers: 1 }, 'gatehouse proxy listening');

  stopOnSignals({ logger, stop: () => Promise.all([drain(server), worker.stop()]).then(() => undefined) });
}
