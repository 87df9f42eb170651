import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../shared/config.js';
import { gatewayCookieNames, readCookie } from '../shared/cookies.js';
import { GatewayError } from '../shared/errors.js';
import type { EventBus } from '../shared/event-bus.js';
import { sendError } from '../shared/http-response.js';
import type { Logger } from '../shared/logger.js';
import { rateLimitHeaders, type RateLimiter } from '../shared/rate-limiter.js';
import { rateLimitKey } from '../shared/client-ip.js';
import type { SessionStore } from '../shared/session-store.js';
import type { AccessLogEntry } from '../shared/types.js';
import { AccessLogStore } from './access-log-store.js';
import { openAccessLogWriter } from './access-log-writer.js';
import { AuditLog } from './audit-log.js';
import type { Database } from './database.js';
import { exemptFromGeneralLimit } from './guards.js';
import { LoginTransactions } from './oidc/login-transactions.js';
import { RelyingParty } from './oidc/relying-party.js';
import type { Handler } from './request-context.js';
import { buildRouter } from './routes.js';
import { ConsoleAssets } from './console/console-assets.js';
import { startRetention } from './retention.js';
import { createAuthHandlers } from './routes/auth-routes.js';
import { createConsoleHandlers } from './routes/console-routes.js';
import { createDashboardHandlers } from './routes/dashboard-routes.js';
import { createPageHandlers } from './routes/page-routes.js';
import { createServiceHandlers } from './routes/service-routes.js';
import { ServiceRegistry } from './service-registry.js';
import { TrafficRollups } from './traffic-rollups.js';

/** What the control plane needs from its process. */
export interface AdminPlaneDeps {
  config: Config;
  db: Database;
  sessions: SessionStore;
  bus: EventBus;
  generalLimiter: RateLimiter;
  authLimiter: RateLimiter;
  clientIp: (req: IncomingMessage) => string;
  logger: Logger;
}

/** The control plane: auth endpoints, admin API, dashboard API and pages, over SQLite. */
export interface AdminPlane {
  /** node:http 'request' listener for gateway-owned paths (public port hand-off and admin port). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Stores one batch of access-log records and their rollups in one transaction, off this
   * thread's event loop (see access-log-writer.ts); resolves once committed. The embedded sink's
   * and the Redis stream consumer's destination.
   */
  storeAccessLogs(batch: AccessLogEntry[]): Promise<void>;
  /**
   * Stops the plane's background work (access-log retention) and its access-log writer once the
   * batches handed to it are stored; call after the access-log sink or consumer has stopped and
   * before closing the database.
   */
  close(): Promise<void>;
}

/**
 * Builds the admin plane and publishes the current registry snapshot, so the data plane routes
 * from the first request on.
 */
export async function createAdminPlane(deps: AdminPlaneDeps): Promise<AdminPlane> {
  const { config, db, sessions, bus, logger } = deps;
  const audit = new AuditLog(db);
  const registry = new ServiceRegistry(db, audit, bus);
  const rollups = new TrafficRollups(db);
  const accessLogs = new AccessLogStore(db, rollups);
  const relyingParty = new RelyingParty(config, logger);
  const router = buildRouter({
    pages: createPageHandlers({ config, registry, relyingParty }),
    auth: createAuthHandlers({
      config,
      sessions,
      audit,
      relyingParty,
      transactions: new LoginTransactions(db),
      authLimiter: deps.authLimiter,
      logger,
    }),
    services: createServiceHandlers({ registry, accessLogs }),
    dashboard: createDashboardHandlers({ registry, audit, rollups }),
    console: createConsoleHandlers({ registry, audit, accessLogs, rollups, assets: ConsoleAssets.load() }),
  });
  await registry.publish();
  const stopRetention = startRetention(db, config, logger);
  const writer = openAccessLogWriter(db, config.databasePath);

  const sessionCookie = gatewayCookieNames(config.publicUrl).session;
  const origin = config.publicUrl.origin;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const clientIp = deps.clientIp(req);
    const rawUrl = req.url ?? '/';
    const url = new URL(rawUrl.startsWith('/') ? origin + rawUrl : origin);
    const cookieValue = readCookie(req.headers.cookie, sessionCookie);
    const session = cookieValue ? await sessions.get(cookieValue) : null;
    if (!exemptFromGeneralLimit(url.pathname, session)) {
      const decision = await deps.generalLimiter.consume(rateLimitKey(clientIp));
      if (!decision.allowed) throw new GatewayError('RATE_LIMITED', { headers: rateLimitHeaders(decision) });
    }
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (!match) throw new GatewayError('NOT_FOUND');
    if ('allow' in match) throw new GatewayError('METHOD_NOT_ALLOWED', { headers: { allow: match.allow.join(', ') } });
    const handler: Handler = match.handler;
    await handler({ req, res, url, params: match.params, clientIp, session, sessionId: session ? cookieValue! : null });
  }

  return {
    handle(req, res) {
      serve(req, res).catch((error: unknown) => respondWithError(res, error, logger));
    },
    storeAccessLogs: (batch) => writer.store(batch),
    async close() {
      stopRetention();
      await writer.close();
    },
  };
}

/** Sends a GatewayError as is; anything else is logged and becomes 500 `Internal server error`. */
function respondWithError(res: ServerResponse, error: unknown, logger: Logger): void {
  const known = error instanceof GatewayError ? error : undefined;
  if (!known) logger.error({ err: error }, 'admin request failed');
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendError(res, known ?? new GatewayError('INTERNAL'));
}
