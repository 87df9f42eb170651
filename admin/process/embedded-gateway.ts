import { createAdminPlane } from '../admin-plane.js';
import { openDatabase, type Database } from '../database.js';
import { createProxyPlane } from '../../proxy/proxy-plane.js';
import { createPublicServer } from '../../proxy/process/public-server.js';
import { logAccessLogTotals } from '../../shared/backends/access-log-sink.js';
import { clientIpResolver } from '../../shared/client-ip.js';
import type { Config } from '../../shared/config.js';
import { createGatewayServer, drain, listen } from '../../shared/http-server.js';
import { internalEndpoints } from '../../shared/internal-endpoints.js';
import type { Logger } from '../../shared/logger.js';
import { GatewayMetrics, meteredSink } from '../../proxy/gateway-metrics.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import type { SessionStore } from '../../shared/backends/session-store.js';

/** A running gateway: both planes in this process (the embedded default, DESIGN §2). */
export interface Gateway {
  readonly config: Config;
  readonly sessions: SessionStore;
  readonly db: Database;
  /** The ports actually bound (useful when PORT or ADMIN_PORT is 0). */
  readonly port: number;
  readonly adminPort: number;
  /**
   * Stops accepting, lets in-flight requests finish (up to 10 s), ships buffered access-log
   * records (into SQLite, or to the Redis stream: for up to 5 s while Redis is away, then they are
   * dropped, counted and logged), closes Redis (about 1.5 s at most) and the database. Safe to
   * call twice.
   */
  close(): Promise<void>;
}

/**
 * Starts both planes in one process: the public listener on PORT, and the admin-port API on
 * ADMIN_PORT with `/healthz`, `/readyz` and `/metrics`. Without REDIS_URL the cross-plane
 * dependencies are embedded; with it, they go through Redis (so split-mode processes can join).
 * @throws when the database cannot be opened, Redis is malformed, or a port cannot be bound.
 */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  const db = openDatabase(config.databasePath);
  const backends = await openBackends(config, db, logger);
  const clientIp = clientIpResolver(config.trustProxy);
  const admin = await createAdminPlane({
    ...backends,
    config,
    db,
    clientIp,
    logger: logger.child({ plane: 'admin' }),
  });
  const consumer = backends.consumeAccessLogs(admin.storeAccessLogs);
  const accessLog = backends.accessLogSink(admin.storeAccessLogs);
  const metrics = new GatewayMetrics(accessLog);
  const proxy = createProxyPlane({
    ...backends,
    config,
    accessLog: meteredSink(accessLog, metrics),
    upstreamFailures: metrics,
    clientIp,
    adminPlane: admin.handlePublic,
    logger: logger.child({ plane: 'proxy' }),
  });
  const internal = internalEndpoints({
    checks: backends.readiness,
    metrics: async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }),
  });
  const publicServer = createPublicServer(proxy);
  const adminServer = createGatewayServer((req, res) => internal(req, res) || admin.handle(req, res));
  const port = await listen(publicServer.server, config.port);
  const adminPort = await listen(adminServer, config.adminPort, config.adminHost);

  const close = async () => {
    await Promise.all([publicServer.close(), drain(adminServer)]);
    await accessLog.close();
    logAccessLogTotals(logger, accessLog, 'access log closed');
    await consumer.stop();
    await proxy.close();
    await admin.close();
    await backends.close();
    db.close();
  };
  let closing: Promise<void> | undefined;
  return {
    config,
    sessions: backends.sessions,
    db,
    port,
    adminPort,
    close: () => (closing ??= close()),
  };
}
