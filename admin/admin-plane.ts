import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../shared/config/config.js';
import { readCookie } from '../shared/http/cookies.js';
import { errorCode } from '../shared/error-code.js';
import { GatewayError } from '../shared/errors.js';
import type { EventBus } from '../shared/backends/event-bus.js';
import { answerFailure } from '../shared/http/failure-response.js';
import type { Logger } from '../shared/logger.js';
import { refuseOverLimit, type RateLimiter } from '../shared/backends/rate-limiter.js';
import { rateLimitKey } from '../shared/http/client-ip.js';
import type { SessionStore } from '../shared/backends/session-store.js';
import type { SessionGate } from '../shared/identity/session-gate.js';
import type { Session } from '../shared/types.js';
import type { AccessLogReads } from './access-log/reading/access-log-reads.js';
import { ApiTokens } from './credentials/api-tokens.js';
import { AssertionKeys } from './credentials/assertion-keys.js';
import { sessionEncryptionKeys } from './credentials/session-key-store.js';
import { AuditLog } from './audit-log.js';
import { isLiveToken, presentedToken } from './credentials/bearer-auth.js';
import type { Database } from './database.js';
import { exemptFromGeneralLimit } from './http/guards.js';
import { LoginTransactions } from './oidc/login-transactions.js';
import { HostHandoffs } from './oidc/host-handoffs.js';
import { createHostCallbackHandler } from './routes/host-session-routes.js';
import { RelyingParty } from './oidc/relying-party.js';
import type { Handler } from './http/request-context.js';
import { buildRouter, buildServiceHostRouter, type RouteHandlers } from './routes/route-table.js';
import type { Router } from './http/router.js';
import { ConsoleAssets } from './console/console-assets.js';
import { createAssertionKeyHandlers } from './routes/assertion-key-routes.js';
import { createAuthHandlers } from './routes/auth-routes.js';
import { createConsoleHandlers } from './routes/console-routes.js';
import { createDashboardHandlers } from './routes/dashboard-routes.js';
import { createOpenApiHandlers } from './routes/openapi-routes.js';
import { createPageHandlers } from './routes/page-routes.js';
import { createServiceHandlers } from './routes/service-routes.js';
import { createTokenHandlers } from './routes/token-routes.js';
import { acceptsSession, ServedOrigins, type ServedOrigin } from './http/served-origin.js';
import { reservedHosts } from './registry/reserved-hosts.js';
import { hostMatches } from '../shared/services/host-names.js';
import { ServiceRegistry } from './registry/service-registry.js';
import { TargetHealthReports } from './registry/service-health.js';
import { TrafficRollups } from './access-log/traffic-rollups.js';
import { answerUnrouted } from './http/unrouted.js';
import type { ReplayGuard } from '../shared/backends/replay-guard.js';
import { IssuerKeys } from '../shared/identity/issuer-keys.js';
import { TokenCipher } from '../shared/identity/token-encryption.js';
import { createBackchannelLogoutHandler } from './routes/backchannel-logout-route.js';
import { createSessionHandlers } from './routes/session-routes.js';
import { createSessionPageHandlers } from './routes/session-page-routes.js';
import { SessionRevalidator } from './sessions/session-revalidator.js';
import { GrantRelease } from './sessions/grant-release.js';
import { SessionRevocation } from './sessions/session-revocation.js';
import { AcmeCertificates } from './acme/acme-certificates.js';
import { createCertificateHandlers } from './acme/certificate-routes.js';
import type { AdminTracing } from './tracing/admin-tracing.js';
import { nameRequestSpan, type AdminRequestIdentities, type AdminRequestIdentity } from './tracing/request-identity.js';

/** What the control plane needs from its process. */
export interface AdminPlaneDeps {
  config: Config;
  db: Database;
  /** The access log's pages, read off this thread (access-log-reads.ts). */
  accessLogs: AccessLogReads;
  sessions: SessionStore;
  /** Admits this origin's session cookies (shared/identity/session-gate.ts), as the data plane does. */
  sessionGate: SessionGate;
  bus: EventBus;
  /** Back-channel logout tokens' `jti`s already used. */
  usedTokenIds: ReplayGuard;
  generalLimiter: RateLimiter;
  authLimiter: RateLimiter;
  /** RATE_LIMIT_TOKEN, keyed by the id of the admin API token a request acts with (design.md §4.8). */
  tokenLimiter: RateLimiter;
  clientIp: (req: IncomingMessage) => string;
  /** Each request's id and trace (design.md §3.10). */
  identities: AdminRequestIdentities;
  /** The spans the plane starts itself (refresh re-validation) and its requests to the identity provider. */
  tracing: AdminTracing;
  logger: Logger;
}

/** The control plane: auth endpoints, admin API, dashboard API and pages, over SQLite. */
export interface AdminPlane {
  /**
   * node:http 'request' listener of the admin port: ADMIN_URL's origin, or the public one for a
   * request a proxy process handed over (split mode) and whenever ADMIN_URL is unset.
   */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * Serves a gateway-owned path of the public origin, handed over by this process's data plane;
   * with `serviceHost`, a reserved path (`/.gatehouse/…`) of that service host (design.md §4.16).
   */
  handlePublic(req: IncomingMessage, res: ServerResponse, serviceHost?: string): void;
  /** Certificates by ACME (design.md §4.15), which the process's listeners serve; undefined while ACME_EMAIL is unset. */
  readonly certificates: AcmeCertificates | undefined;
  /**
   * Stops the plane's background work (assertion key rotation, listening to target health
   * reports); call before closing the database.
   */
  close(): void;
}

/**
 * Builds the admin plane and publishes the assertion keys (made on the first start: design.md
 * §4.7) and the current registry snapshot, so the data plane signs and routes from the first
 * request on. With Redis unreachable it resolves after the bus's write wait (about 2 s), and the
 * bus publishes both once Redis answers.
 */
export async function createAdminPlane(deps: AdminPlaneDeps): Promise<AdminPlane> {
  const parts = openParts(deps);
  const { origins, assertionKeys, targetHealth } = parts;
  const handlers = routeHandlers(deps, parts);
  const routers: OriginRouters = {
    byOrigin: new Map([origins.public, origins.admin].map((o) => [o, buildRouter(handlers, o)])),
    serviceHost: buildServiceHostRouter(handlers),
  };
  // Side by side: with Redis away each waits for it (about 2 s) before the plane goes on without it.
  await Promise.all([assertionKeys.start(), publishRegistryAtStart(parts.registry, deps.logger)]);
  const stopRevalidating = parts.revalidator.start();
  parts.certificates?.start();
  const serve = requestServer(deps, parts.tokens, routers);
  const serveOn = (req: IncomingMessage, res: ServerResponse, origin: ServedOrigin, identity: AdminRequestIdentity): void => {
    const logger = deps.logger.child({ requestId: identity.requestId });
    // A backend that cannot be reached answers 503 on every path (failure-response.ts); the rest is logged.
    serve(req, res, origin, identity, logger).catch((error: unknown) => answerFailure(req, res, error, (err) => logger.error({ err }, 'admin request failed')));
  };
  return {
    handle: (req, res) => serveOn(req, res, origins.ofAdminPortRequest(req), deps.identities.ofAdminPort(req, res)),
    handlePublic: (req, res, serviceHost) => serveOn(req, res, origins.ofHandoff(req, serviceHost), deps.identities.ofInProcess(req, res)),
    certificates: parts.certificates,
    close() {
      stopRevalidating();
      parts.certificates?.close();
      assertionKeys.close();
      targetHealth.close();
    },
  };
}

/** What the plane's routes work with, made once per plane over its database and backends. */
interface PlaneParts {
  audit: AuditLog;
  registry: ServiceRegistry;
  targetHealth: TargetHealthReports;
  assertionKeys: AssertionKeys;
  rollups: TrafficRollups;
  tokens: ApiTokens;
  relyingParty: RelyingParty;
  origins: ServedOrigins;
  /** Seals refresh tokens at rest: SESSION_ENCRYPTION_KEY's keys, else the key kept in the database (credentials/session-key-store.ts). */
  cipher: TokenCipher;
  grants: GrantRelease;
  revocation: SessionRevocation;
  revalidator: SessionRevalidator;
  /** The identity provider's keys for logout tokens; undefined without an issuer configured. */
  issuerKeys: IssuerKeys | undefined;
  /** Certificates by ACME; undefined while ACME_EMAIL is unset. */
  certificates: AcmeCertificates | undefined;
}

/** The plane's parts over `deps`; nothing is started or published yet. */
function openParts(deps: AdminPlaneDeps): PlaneParts {
  const { config, db, sessions, bus, logger } = deps;
  const audit = new AuditLog(db);
  const registry = new ServiceRegistry(db, audit, bus, { reservedHosts: reservedHosts(config.publicUrl, config.adminUrl) });
  const targetHealth = new TargetHealthReports(bus);
  const assertionKeys = new AssertionKeys(db, audit, bus, config, logger);
  const rollups = new TrafficRollups(db);
  const tokens = new ApiTokens(db, audit);
  const relyingParty = new RelyingParty(config, logger, deps.tracing.spanExport);
  const origins = new ServedOrigins(config);
  const cipher = new TokenCipher(sessionEncryptionKeys(db, { configured: config.sessionEncryptionKeys, sessionTtlMs: config.sessionTtlMs }, logger));
  const checksLogger = logger.child({ component: 'session-checks' });
  const grants = new GrantRelease(relyingParty, cipher, checksLogger);
  const revocation = new SessionRevocation(sessions, audit, grants);
  const revalidator = new SessionRevalidator({ store: sessions, relyingParty, cipher, revocation, config, tracing: deps.tracing, logger: checksLogger });
  const issuerKeys = config.oidc.issuer ? new IssuerKeys(config.oidc.issuer, logger, 'logout tokens') : undefined;
  const acme = config.tls.acme;
  const certificates = acme && new AcmeCertificates({ settings: acme, publicUrl: config.publicUrl, adminUrl: config.adminUrl, httpPort: config.tls.httpPort, db, cipher, bus, logger: logger.child({ component: 'acme' }) });
  return { audit, registry, targetHealth, assertionKeys, rollups, tokens, relyingParty, origins, cipher, grants, revocation, revalidator, issuerKeys, certificates };
}

/** Every group of the plane's handlers (routes/route-table.ts routes them), over `parts`. */
function routeHandlers(deps: AdminPlaneDeps, parts: PlaneParts): RouteHandlers {
  const { config, db, sessions, accessLogs, logger } = deps;
  const { audit, registry, targetHealth, rollups, tokens, relyingParty, origins, cipher, grants, revocation } = parts;
  const handoffs = new HostHandoffs(db);
  return {
    pages: createPageHandlers({ config, registry, relyingParty }),
    auth: createAuthHandlers({
      config,
      sessions,
      audit,
      relyingParty,
      transactions: new LoginTransactions(db),
      authLimiter: deps.authLimiter,
      cipher,
      grants,
      handoffs,
      returnRules: { publicUrl: config.publicUrl, adminUrl: config.adminUrl, isServiceHost: (host) => namesHost(registry, host) },
      logger,
    }),
    hostSessions: { callback: createHostCallbackHandler({ sessions, handoffs }) },
    backchannelLogout: createBackchannelLogoutHandler({ config, sessions, revocation, usedTokenIds: deps.usedTokenIds, issuerKeys: parts.issuerKeys, authLimiter: deps.authLimiter, logger }),
    sessions: createSessionHandlers({ sessions, revocation }),
    sessionPages: createSessionPageHandlers({ sessions, revocation }),
    services: createServiceHandlers({ registry, accessLogs, targetHealth }),
    dashboard: createDashboardHandlers({ registry, audit, rollups }),
    console: createConsoleHandlers({ registry, audit, accessLogs, rollups, tokens, targetHealth, assets: ConsoleAssets.load(), traceUiUrl: config.traceUiUrl }),
    assertionKeys: createAssertionKeyHandlers({ keys: parts.assertionKeys }),
    tokens: createTokenHandlers({ tokens }),
    certificates: createCertificateHandlers({ certificates: parts.certificates }),
    openapi: createOpenApiHandlers({ origins: [origins.public, origins.admin] }),
  };
}

/**
 * How the plane serves a request on one of its origins: the session of the origin's cookie (when
 * the session gate admits it and the origin accepts it), an API token where the admin API is
 * served, the general rate limit (per address) or a live token's own (per token), then the handler `routers` give for the origin, method and path
 * (the request's span named by its route), with the request's `identity` and `logger`.
 * The returned function rejects with a {@link GatewayError} (over the rate limit, a method the
 * path does not take) or with whatever the handler throws.
 */
function requestServer(deps: AdminPlaneDeps, tokens: ApiTokens, routers: OriginRouters) {
  return async (req: IncomingMessage, res: ServerResponse, origin: ServedOrigin, identity: AdminRequestIdentity, logger: Logger): Promise<void> => {
    const clientIp = deps.clientIp(req);
    const rawUrl = req.url ?? '/';
    const url = new URL(rawUrl.startsWith('/') ? origin.url.origin + rawUrl : origin.url.origin);
    const cookieValue = readCookie(req.headers.cookie, origin.cookies.names.session);
    const session = cookieValue ? await originSession(deps.sessionGate, origin, cookieValue) : null;
    // Only where the admin API is served: elsewhere no route takes a token (design.md §4.8).
    const apiToken = origin.servesConsole ? presentedToken(req.headers.authorization, tokens) : null;
    if (!exemptFromGeneralLimit(url.pathname, session, apiToken)) {
      refuseOverLimit(await deps.generalLimiter.consume(rateLimitKey(clientIp)));
    }
    // A live token is counted by its id wherever it comes from, so a script spread over addresses
    // stays bounded and one token's flood leaves other tokens (and the admins' sessions) alone.
    if (isLiveToken(apiToken)) refuseOverLimit(await deps.tokenLimiter.consume(apiToken.id));
    const router = origin.kind === 'host' ? routers.serviceHost : routers.byOrigin.get(origin)!;
    const match = router.match(req.method ?? 'GET', url.pathname);
    if (!match) return answerUnrouted(req, res, url, origin);
    if ('allow' in match) throw new GatewayError('METHOD_NOT_ALLOWED', { headers: { allow: match.allow.join(', ') } });
    nameRequestSpan(identity.span, req.method, match.pattern);
    const handler: Handler = match.handler;
    await handler({
      req, res, origin, url, params: match.params, clientIp, session, apiToken,
      sessionId: session ? cookieValue! : null,
      bodyPauseMs: deps.config.upstreamTimeoutMs,
      logger,
      span: identity.span,
    });
  };
}

/** Whether a service of `registry` lists `host` (normal form), exactly or by a wildcard. */
function namesHost(registry: ServiceRegistry, host: string): boolean {
  return registry.snapshot().some((service) => service.hosts?.some((name) => hostMatches(name, host)));
}

/** The routers of the plane's origins: PUBLIC_URL's and ADMIN_URL's, and every service host's reserved paths. */
interface OriginRouters {
  byOrigin: ReadonlyMap<ServedOrigin, Router>;
  serviceHost: Router;
}

/**
 * The session a request's cookie gives on `origin`: one made there (served-origin.ts
 * `acceptsSession`); on a service host, the session its link names, with the link's own CSRF
 * token (design.md §4.16), and only a public-origin session.
 */
async function originSession(gate: SessionGate, origin: ServedOrigin, cookieValue: string): Promise<Session | null> {
  if (origin.kind !== 'host') {
    const stored = await gate.admit(cookieValue);
    return stored && acceptsSession(origin, stored) ? stored : null;
  }
  const linked = await gate.admitLink(cookieValue, origin.serviceHost!);
  return linked && acceptsSession(origin, linked.session) ? { ...linked.session, csrfToken: linked.link.csrfToken } : null;
}

/**
 * The registry's first publication. When Redis is unreachable (a bus error with code
 * `REDIS_UNAVAILABLE`) it logs that and resolves: the Redis bus publishes the latest registry it
 * was given as soon as Redis answers (snapshot-publisher.ts), so a process started before Redis
 * waits for it instead of exiting.
 * @throws whatever else the bus throws.
 */
async function publishRegistryAtStart(registry: ServiceRegistry, logger: Logger): Promise<void> {
  try {
    await registry.publish();
  } catch (error) {
    if (errorCode(error) !== 'REDIS_UNAVAILABLE') throw error;
    logger.warn('registry not published yet: Redis is unreachable; it will be once Redis answers');
  }
}
