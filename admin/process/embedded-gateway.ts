/**
 * The embedded gateway (`npm start`): both planes in one process. It lives with the admin
 * process's entry points because it is that process plus an in-process data plane: it owns the
 * SQLite database, its access-log writer and ADMIN_PORT the same way (admin-storage.ts,
 * start-admin-plane.ts), and it is the only module that imports both planes. Never the other way
 * round: nothing under proxy/ imports admin/, so a proxy process never loads SQLite.
 */
import { logAccessLogTotals } from '../../shared/backends/access-log-sink.js';
import { closeInOrder } from '../../shared/close-in-order.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/logger.js';
import { GatewayMetrics } from '../../proxy/pipeline/gateway-metrics.js';
import { startProxyPlane } from '../../proxy/process/start-proxy-plane.js';
import type { AccessLogWriter } from '../access-log/writing/access-log-writer.js';
import type { Database } from '../database.js';
import { AdminTracing } from '../tracing/admin-tracing.js';
import { openAdminStorage } from './admin-storage.js';
import { startAdminPlane } from './start-admin-plane.js';

/** A running gateway: both planes in this process (the embedded default, design.md §2). */
export interface Gateway {
  readonly config: Config;
  readonly sessions: SessionStore;
  /** The process's event bus, both planes' (tests publish on it as a proxy process would). */
  readonly bus: EventBus;
  readonly db: Database;
  /** Where access-log batches are stored (the data plane's sink ships to it; tests store through it too). */
  readonly accessLogWriter: AccessLogWriter;
  /** The ports actually bound (useful when PORT or ADMIN_PORT is 0). */
  readonly port: number;
  readonly adminPort: number;
  /**
   * Stops accepting, lets in-flight requests finish (up to 10 s), ships buffered access-log
   * records (into SQLite, or to the Redis stream: for up to 5 s while Redis is away, then they are
   * dropped, counted and logged), closes Redis (about 1.5 s at most) and the database, then sends
   * the last spans. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Starts both planes in one process: the admin plane ({@link startAdminPlane}) on ADMIN_PORT with
 * `/healthz`, `/readyz` and the data plane's `/metrics`, and the data plane
 * ({@link startProxyPlane}) on PORT, handing gateway-owned paths to the admin plane in-process.
 * Without REDIS_URL the cross-plane dependencies are embedded; with it, they go through Redis (so
 * split-mode processes can join). With OTEL_TRACES_EXPORTER=otlp both planes send their spans through
 * one span export named `gatehouse` (design.md §3.10), its counts on ADMIN_PORT's `/metrics`.
 * @throws when the database cannot be opened, Redis is malformed, or a port cannot be bound.
 */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  const tracing = AdminTracing.open(config.tracing, 'gatehouse', logger);
  const storage = await openAdminStorage(config, logger, tracing).catch(stopAndRethrow(() => tracing.close()));
  const { db, backends } = storage;
  const metrics = new GatewayMetrics(backends.accessLogSink());
  // A port taken: what started is stopped, so a caller that goes on (a test, an embedder) keeps no
  // listener, timer or connection that would hold its process open.
  const admin = await startAdminPlane({ config, storage, tracing, publicRequests: 'in-process', metrics: metrics.registry, logger: logger.child({ plane: 'admin' }) })
    .catch(stopAndRethrow(() => closeInOrder(storage, tracing)));
  const proxy = await startProxyPlane({ config, backends, adminPlane: admin.handlePublic, metrics, certificates: admin.certificates, spanExport: tracing.spanExport, logger: logger.child({ plane: 'proxy' }) })
    .catch(stopAndRethrow(() => closeInOrder(admin, storage, tracing)));

  const close = async () => {
    await Promise.all([proxy.close(), admin.close()]);
    logAccessLogTotals(logger, backends.accessLogSink(), 'access log closed');
    // The spans last: the planes' and the last batches' stores are sent too.
    await closeInOrder(storage, tracing);
  };
  let closing: Promise<void> | undefined;
  return {
    config,
    sessions: backends.sessions,
    bus: backends.bus,
    db,
    accessLogWriter: storage.accessLogWriter,
    port: proxy.port,
    adminPort: admin.port,
    close: () => (closing ??= close()),
  };
}

/** A rejection handler that runs `stop`, then rejects with the original error. */
function stopAndRethrow(stop: () => Promise<void>): (error: unknown) => Promise<never> {
  return async (error) => {
    await stop();
    throw error;
  };
}
