import { clientIpResolver } from '../../shared/client-ip.js';
import { stopOnSignals } from '../../shared/graceful-stop.js';
import { TrustedProxies } from '../../shared/trusted-proxies.js';
import { createGatewayServer, drain, listen } from '../../shared/http-server.js';
import { internalEndpoints } from '../../shared/internal-endpoints.js';
import { createLogger } from '../../shared/logger.js';
import { processMetricsRegistry } from '../../shared/process-metrics.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import { readProcessConfig } from '../../shared/process-config.js';
import { HANDED_OFF_HEADER_FIELDS } from '../../shared/request-head.js';
import { createAdminPlane } from '../admin-plane.js';
import { openDatabase } from '../database.js';

/**
 * `npm run start:admin`: the control plane alone (split mode, DESIGN §2); run exactly one. Needs
 * REDIS_URL. Owns SQLite: publishes registry snapshots and session revocations over Redis, and
 * consumes the access-log stream into SQLite. Serves the admin-port API on ADMIN_PORT (which the
 * proxies reach as ADMIN_INTERNAL_URL) with `/healthz`, `/readyz` and `/metrics`. The client
 * address comes from the proxies' `X-Forwarded-For`, believed from loopback and TRUST_PROXY peers.
 * On SIGTERM or SIGINT: finishes in-flight requests (up to 10 s), stops consuming, closes Redis and
 * SQLite, exits 0; within 18 s whatever Redis does (README "Stopping").
 */
async function main(): Promise<void> {
  const config = readProcessConfig('admin', { requireRedis: true, requireOidc: true });
  const logger = createLogger(config.logLevel, 'gatehouse-admin');
  const db = openDatabase(config.databasePath);
  const backends = await openBackends(config, db, logger);
  const admin = await createAdminPlane({
    ...backends,
    config,
    db,
    clientIp: clientIpResolver(new TrustedProxies(['loopback', ...config.trustProxy.entries])), // the proxies' hand-offs come from loopback too
    logger,
  });
  const consumer = backends.consumeAccessLogs(admin.storeAccessLogs);
  const metrics = processMetricsRegistry(); // the data plane's series live in the proxy processes
  const internal = internalEndpoints({
    checks: backends.readiness,
    metrics: async () => ({ contentType: metrics.contentType, body: await metrics.metrics() }),
  });
  const server = createGatewayServer((req, res) => internal(req, res) || admin.handle(req, res), HANDED_OFF_HEADER_FIELDS);
  const port = await listen(server, config.adminPort, config.adminHost);
  logger.info({ adminPort: port }, 'gatehouse admin listening');

  stopOnSignals({
    logger,
    async stop() {
      await drain(server);
      await consumer.stop();
      await admin.close();
      await backends.close();
      db.close();
    },
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`gatehouse admin: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
