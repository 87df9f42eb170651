import { stopOnSignals } from '../../shared/graceful-stop.js';
import { createLogger } from '../../shared/logger.js';
import { readProcessConfig } from '../../shared/config/process-config.js';
import { AdminTracing } from '../tracing/admin-tracing.js';
import { openAdminStorage } from './admin-storage.js';
import { startAdminPlane } from './start-admin-plane.js';

/**
 * `npm run start:admin`: the control plane alone (split mode, design.md §2); run exactly one. Needs
 * REDIS_URL. Owns SQLite: publishes registry snapshots and session revocations over Redis, and
 * consumes the access-log stream into SQLite. Serves the admin-port API on ADMIN_PORT (which the
 * proxies reach as ADMIN_INTERNAL_URL) with `/healthz`, `/readyz` and `/metrics`. The client
 * address comes from the proxies' `X-Forwarded-For`, believed from loopback and TRUST_PROXY peers.
 * Started while Redis is unreachable it does not exit: it serves ADMIN_PORT with `/readyz` saying
 * not ready (naming the checks that fail), and publishes and consumes once Redis answers
 * (admin-storage.ts). With OTEL_TRACES_EXPORTER=otlp it sends its spans as `gatehouse-admin`
 * (design.md §3.10).
 * On SIGTERM or SIGINT: finishes in-flight requests (up to 10 s), stops consuming, closes Redis and
 * SQLite, sends its last spans, exits 0; within 18 s whatever Redis does (README "Stopping").
 */
async function main(): Promise<void> {
  const config = readProcessConfig('admin', { requireRedis: true, requireOidc: true });
  const logger = createLogger(config.logLevel, 'gatehouse-admin');
  const tracing = AdminTracing.open(config.tracing, 'gatehouse-admin', logger);
  const storage = await openAdminStorage(config, logger, tracing);
  const admin = await startAdminPlane({ config, storage, tracing, publicRequests: 'handed-off', logger });
  logger.info({ adminPort: admin.port }, 'gatehouse admin listening');

  stopOnSignals({
    logger,
    async stop() {
      await admin.close();
      await storage.close();
      await tracing.close();
    },
  });
}

void main().catch((error: unknown) => {
  process.stderr.write(`gatehouse admin: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
