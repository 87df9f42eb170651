import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdminPlane } from '../admin/admin-plane.js';
import { openDatabase, type Database } from '../admin/database.js';
import { createProxyPlane } from '../proxy/proxy-plane.js';
import { BatchingAccessLogSink } from './batching-access-log-sink.js';
import { clientIpResolver } from './client-ip.js';
import type { Config } from './config.js';
import { MemoryEventBus } from './embedded/memory-event-bus.js';
import { MemoryRateLimiter } from './embedded/memory-rate-limiter.js';
import { SqliteSessionStore } from './embedded/sqlite-session-store.js';
import type { Logger } from './logger.js';
import type { SessionStore } from './session-store.js';

/** How long a stopping gateway lets in-flight requests finish, in ms. */
const DRAIN_TIMEOUT_MS = 10_000;

/** A running gateway: both planes in this process (the embedded default, DESIGN §2). */
export interface Gateway {
  readonly config: Config;
  readonly sessions: SessionStore;
  readonly db: Database;
  /** The ports actually bound (useful when PORT or ADMIN_PORT is 0). */
  readonly port: number;
  readonly adminPort: number;
  /**
   * Stops accepting, lets in-flight requests finish (up to 10 s), flushes buffered access-log
   * records into SQLite, and closes the database. Safe to call twice.
   */
  close(): Promise<void>;
}

/**
 * Starts the embedded gateway: SQLite sessions, in-process event bus, in-memory rate limits,
 * access-log records handed straight to the batch writer; the public listener on PORT and the
 * admin-port API on ADMIN_PORT.
 * @throws when REDIS_URL is set (split mode is not part of the embedded process), when the database
 *   cannot be opened, or when a port cannot be bound.
 */
export async function startGateway(config: Config, logger: Logger): Promise<Gateway> {
  if (config.redisUrl) throw new Error('REDIS_URL: the Redis-backed mode is not available in this build; unset it to run embedded');
  const db = openDatabase(config.databasePath);
  const sessions = new SqliteSessionStore(db);
  const bus = new MemoryEventBus();
  const generalLimiter = new MemoryRateLimiter(config.rateLimitGeneral);
  const clientIp = clientIpResolver(config.trustProxy);
  const admin = await createAdminPlane({
    config,
    db,
    sessions,
    bus,
    generalLimiter,
    authLimiter: new MemoryRateLimiter(config.rateLimitAuth),
    clientIp,
    logger: logger.child({ plane: 'admin' }),
  });
  const accessLog = new BatchingAccessLogSink((batch) => admin.storeAccessLogs(batch), {
    onError: (err) => logger.error({ err }, 'storing access-log batch failed; will retry'),
  });
  const proxy = createProxyPlane({
    config,
    bus,
    sessions,
    accessLog,
    generalLimiter,
    clientIp,
    adminPlane: admin.handle,
    logger: logger.child({ plane: 'proxy' }),
  });
  const publicServer = await listen(createServer(serverOptions(), proxy.handle), config.port);
  const adminServer = await listen(createServer(serverOptions(), admin.handle), config.adminPort);

  let closing: Promise<void> | undefined;
  const close = async () => {
    await Promise.all([drain(publicServer), drain(adminServer)]);
    await accessLog.close();
    await proxy.close();
    await sessions.close();
    await bus.close();
    db.close();
  };
  return {
    config,
    sessions,
    db,
    port: (publicServer.address() as AddressInfo).port,
    adminPort: (adminServer.address() as AddressInfo).port,
    close: () => (closing ??= close()),
  };
}

/**
 * Keep-alive longer than common load balancers' idle timeout (60 s) so they never reuse a socket
 * we are closing; no overall request timeout, since proxied bodies may stream for long.
 */
function serverOptions() {
  return { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 0 };
}

function listen(server: Server, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Stops accepting, closes idle sockets, and waits for active requests (forcing after the drain timeout). */
async function drain(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
  await closed;
  clearTimeout(force);
}
