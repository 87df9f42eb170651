import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import { readCookie } from '../../shared/http/cookies.js';
import { rateLimitKey } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { GatewayError } from '../../shared/errors.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import { FAVICON_PATH, isGatewayPath, isReservedPath, isVerifyPath, JWKS_PATH, SERVICE_HOST_PATHS } from '../../shared/http/gateway-paths.js';
import { acceptsHtml } from '../../shared/http/http-response.js';
import { safeReturnTo } from '../../shared/http/return-to.js';
import { answerFailure } from '../../shared/http/failure-response.js';
import type { Logger } from '../../shared/logger.js';
import { overLimit, type RateLimitDecision, type RateLimiter } from '../../shared/backends/rate-limiter.js';
import type { SessionGate } from '../../shared/identity/session-gate.js';
import type { Service } from '../../shared/types.js';
import { sendAccessDenied } from './access-denied.js';
import { AccessRecord } from './access-record.js';
import { RefusedRequests, type RefusalCounter } from './refused-requests.js';
import { isBarePrefix, redirectToEntry } from '../routing/bare-prefix.js';
import { bearerTokensFor, type BearerTokens } from '../auth/bearer-token.js';
import { isCanonicalPath, pathLength } from '../../shared/routing/canonical-path.js';
import { ActiveHealthChecks } from '../pool/active-health-checks.js';
import { ServiceForwarder } from '../forward/service-forwarder.js';
import type { ForwardExtras } from '../forward/target-attempts.js';
import { IdentityAssertions } from '../auth/identity-assertion.js';
import { readRequestHeaders, type InboundHeaders } from '../headers/inbound-headers.js';
import { JwksEndpoint } from '../auth/jwks-endpoint.js';
import { sendNotAuthenticated } from './login-required.js';
import { RequestHeaderBuilder } from '../headers/request-headers.js';
import { HostRoutes } from '../routing/host-routes.js';
import { gatewayHostsOf } from '../routing/request-host.js';
import type { Route, RouteTable } from '../routing/route-table.js';
import { remainderAfter, routingKey } from '../../shared/routing/routing-key.js';
import { sendServiceDisabled } from './service-disabled.js';
import { AccessDecision } from './access-decision.js';
import { StepUpRequired } from './step-up-required.js';
import { readStepUpQuery } from '../../shared/identity/step-up.js';
import { VerifyEndpoint } from './verify-endpoint.js';
import { SessionCheck } from '../auth/session-check.js';
import { nameServerSpan, RequestIdentities } from './request-identity.js';
import { SpanKind, type SpanExport } from '../../shared/tracing/span-export.js';
import { HostSignIn } from '../auth/host-sign-in.js';
import { stickyCookieName } from '../pool/sticky-target.js';
import { TargetHealthBook } from '../pool/target-health-book.js';
import { TargetHealthReporter } from '../pool/target-health-reporter.js';
import { forwardMode } from './upgrade.js';
import type { UpstreamFailureCounter } from '../forward/upstream-errors.js';
import { requestIdOf } from '../../shared/http/request-id.js';
import { isClientGone } from '../../shared/http/response-state.js';

export interface ProxyPlaneDeps {
  config: Config;
  /** Registry snapshots, each replacing the route table; assertion key sets (design.md §4.7). */
  bus: EventBus;
  /** Admits sessions (shared/identity/session-gate.ts): their checks, their recorded use, their revalidation. */
  sessionGate: SessionGate;
  accessLog: AccessLogSink;
  generalLimiter: RateLimiter;
  clientIp: (req: IncomingMessage) => string;
  /**
   * Serves gateway-owned paths (/auth, /api, /dashboard, and `/` when no service is at `/`), and
   * `/favicon.ico` when no service matches it; with `serviceHost`, that service host's reserved
   * sign-in paths (design.md §4.16).
   */
  adminPlane: (req: IncomingMessage, res: ServerResponse, serviceHost?: string) => void;
  /** Counts target failures (`GatewayMetrics`, gateway-metrics.ts). */
  upstreamFailures: UpstreamFailureCounter;
  /** Counts requests the general rate limit refuses (`GatewayMetrics`). */
  refusals: RefusalCounter;
  /** The process's span export while OTEL_TRACES_EXPORTER is on (design.md §3.10). */
  spanExport?: SpanExport | undefined;
  logger: Logger;
}

export interface ProxyPlane {
  /** node:http 'request' listener for the public port. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /**
   * node:http 'checkContinue' listener (a request with `Expect: 100-continue`): handled as by
   * {@link handle}, but `100 Continue` is sent only once the request is forwarded or handed to the
   * admin plane, so a request refused on the way (404, 429, 503, 401) gets its final status
   * before the client sends the body (RFC 9110 §10.1.1); node:http then closes the connection.
   */
  handleContinue(req: IncomingMessage, res: ServerResponse): void;
  /** Every target's state and counts in this process (for `/metrics`: GatewayMetrics.trackTargets). */
  readonly targetHealth: TargetHealthBook;
  /** Closes upstream connection pools, stops health checks and reports, and unsubscribes. */
  close(): Promise<void>;
}

/** The data plane (design.md §3): routes, checks and forwards every request on the public port. */
export function createProxyPlane(deps: ProxyPlaneDeps): ProxyPlane {
  return new GatewayProxyPlane(deps);
}

class GatewayProxyPlane implements ProxyPlane {
  readonly #deps: ProxyPlaneDeps;
  readonly #forwarder: ServiceForwarder;
  /** Access-log summaries of the requests the general rate limit refuses (design.md §3.9). */
  readonly #refused: RefusedRequests;
  readonly #requestHeaders: RequestHeaderBuilder;
  readonly #decision: AccessDecision;
  readonly #hostSignIn: HostSignIn;
  /** Answers a caller whose sign-in falls short of a step-up (design.md §4.18). */
  readonly #stepUp: StepUpRequired;
  readonly #identities: RequestIdentities;
  /** The general limit is counted in Redis (split mode): a traced request's call to it is a span. */
  readonly #sharedLimit: boolean;
  readonly #assertions: IdentityAssertions;
  readonly #jwks: JwksEndpoint;
  /** `/auth/verify`, the decision for an ingress (design.md §4.19). */
  readonly #verify: VerifyEndpoint;
  /** Undefined while OIDC_API_AUDIENCES leaves bearer tokens off. */
  readonly #bearerTokens: BearerTokens | undefined;
  readonly #unsubscribe: Array<() => void>;
  readonly targetHealth: TargetHealthBook;
  readonly #reporter: TargetHealthReporter;
  readonly #healthChecks = new ActiveHealthChecks();
  readonly #stickyCookieName: string;
  readonly #secure: boolean;
  /** PUBLIC_URL's and ADMIN_URL's host names: the gateway's paths win there even when a service names them (design.md §5). */
  readonly #gatewayHosts: ReadonlySet<string>;
  #routes = HostRoutes.EMPTY;
  /** The latest registry snapshot, kept to rebuild the table when the sticky key changes. */
  #services: readonly Service[] = [];
  #stickyKey = Buffer.alloc(0);

  constructor(deps: ProxyPlaneDeps) {
    this.#deps = deps;
    this.#forwarder = new ServiceForwarder({ headersTimeoutMs: deps.config.upstreamTimeoutMs, logger: deps.logger, failures: deps.upstreamFailures });
    this.#refused = new RefusedRequests(deps.accessLog);
    this.#bearerTokens = bearerTokensFor(deps.config, deps.logger);
    this.#requestHeaders = new RequestHeaderBuilder(deps.config.trustProxy, deps.config.publicUrl, 'public', this.#bearerTokens !== undefined, deps.config.oidc.forwardGroups);
    this.#decision = new AccessDecision(new SessionCheck(deps.sessionGate, deps.config.publicUrl, deps.logger), this.#bearerTokens);
    this.#hostSignIn = new HostSignIn(deps.config.publicUrl);
    this.#stepUp = new StepUpRequired(this.#hostSignIn);
    this.#identities = new RequestIdentities(deps.config.trustProxy, deps.config.tracing, deps.spanExport);
    this.#sharedLimit = deps.config.redis !== undefined;
    this.#assertions = new IdentityAssertions(deps.config.publicUrl, deps.config.assertionTtlMs);
    this.#jwks = new JwksEndpoint(deps.config.assertionTtlMs);
    this.targetHealth = new TargetHealthBook(deps.logger, () => this.#reporter.changed());
    this.#reporter = new TargetHealthReporter(deps.bus, this.targetHealth, deps.logger);
    this.#stickyCookieName = stickyCookieName(deps.config.publicUrl);
    this.#secure = deps.config.publicUrl.protocol === 'https:';
    this.#gatewayHosts = gatewayHostsOf(deps.config.publicUrl, deps.config.adminUrl);
    this.#verify = new VerifyEndpoint({
      ...deps,
      publicUrl: deps.config.publicUrl,
      trusted: deps.config.trustProxy,
      decision: this.#decision,
      assertions: this.#assertions,
      routes: () => this.#routes,
      gatewayHosts: this.#gatewayHosts,
      limit: this.#limitOffPath,
      challenge: this.#bearerTokens?.challenge,
      forwardGroups: deps.config.oidc.forwardGroups,
    });
    this.#unsubscribe = [
      deps.bus.onRegistry((services) => this.#replaceRoutes(services)),
      deps.bus.onAssertionKeys((keys) => {
        this.#assertions.useKeys(keys);
        this.#jwks.useKeys(keys);
        this.#useStickyKey(keys);
      }),
    ];
  }

  /** Bound, so it can be handed to `server.on('request', plane.handle)` as it is. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    this.#pipeline(req, res).catch((error: unknown) => this.#fail(req, res, error));
  };

  readonly handleContinue = (req: IncomingMessage, res: ServerResponse): void => {
    (req as ContinueCarrier)[kExpectsContinue] = true;
    this.handle(req, res);
  };

  async close(): Promise<void> {
    for (const unsubscribe of this.#unsubscribe) unsubscribe();
    this.#reporter.close();
    this.#refused.close();
    await Promise.all([this.#healthChecks.close(), this.#forwarder.close()]);
  }

  /** design.md §3, in order; a failing step throws the {@link GatewayError} the client gets. */
  async #pipeline(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // §3.1 a request-target we can route and forward safely; §3.2 gateway-owned paths, then the
    // route, both decided on the path's routing key (design.md §5)
    const target = req.url ?? '';
    const pathEnd = pathLength(target);
    // §3.10 every answer names its request: an id, and while tracing is on a trace
    const inbound = readRequestHeaders(req);
    const clientIp = this.#deps.clientIp(req);
    const identity = this.#identities.begin(req, res, inbound, target.slice(0, pathEnd), clientIp);
    if (!isCanonicalPath(target, pathEnd)) throw new GatewayError('BAD_REQUEST');
    const path = pathEnd === target.length ? target : target.slice(0, pathEnd);
    const key = routingKey(path);
    if (isReservedPath(key)) return this.#reserved(req, res, path, clientIp);
    // §3.2 routing by host: the reserved prefix above is the gateway's on every host; a host that
    // services name has their table, and the gateway's other paths only on PUBLIC_URL's and
    // ADMIN_URL's hosts; the Host is read only while some service has hosts
    const routes = this.#routes;
    const site = routes.hasHosts ? routes.siteOf(req.rawHeaders) : undefined;
    const table = site?.table ?? routes.hostless;
    const gatewayHere = site === undefined || this.#gatewayHosts.has(site.host);
    // design.md §4.16: on a service host the session cookie names a host session
    const serviceHost = gatewayHere ? undefined : site.host;
    // design.md §4.19: an ingress's question is the gateway's on every host, another peer's only on its own hosts
    if (isVerifyPath(key) && (gatewayHere || this.#verify.trusts(req))) return this.#verify.answer(req, res, inbound, identity, clientIp, path, key);
    if (gatewayHere && this.#servedByGateway(req, res, key, table)) return;
    const route = table.lookup(key);
    if (route === undefined) return this.#unmatched(req, res, path, clientIp, gatewayHere);
    const { trace } = identity;
    nameServerSpan(trace, req.method, route.prefix || (site?.host ?? '/'), route.service.id);
    // §3.9 from here on, every outcome is access-logged: one record per request, but refusals of
    // the rate limit (§3.3) one summary per address, service and minute
    const record = new AccessRecord(this.#deps.accessLog, res, route.service.id, req.method ?? '', target, clientIp);
    if (site !== undefined) record.host = site.host;
    record.http2 = req.httpVersionMajor === 2;
    record.requestId = identity.requestId;
    if (trace?.span !== undefined) record.trace = { traceId: trace.traceId, spanId: trace.spanId! };
    const limiter = this.#deps.generalLimiter;
    if (limiter.limit !== null) {
      const span = this.#sharedLimit ? trace?.child('rate limit', SpanKind.INTERNAL, { 'db.system.name': 'redis' }) : undefined;
      const decision = await limiter.consume(rateLimitKey(clientIp));
      span?.end();
      if (!decision.allowed) throw this.#refusal(decision, route.service.id, record, res);
    }
    // §3.4–3.5 who is asking (read first, so that every outcome below is logged with the user),
    // then disabled service, deny, sign-in and access (access-decision.ts)
    const { service } = route;
    const outcome = await this.#decision.decide({ req, inbound, route, key, serviceHost, identity });
    const { kind, user } = outcome;
    if (user !== undefined) record.userId = user.sub;
    if (isClientGone(res)) return; // the client left while we were deciding
    if (kind === 'disabled') return sendServiceDisabled(res, service, inbound.accept);
    if (kind === 'deny') return sendAccessDenied(res, service, user, inbound.accept);
    if (kind === 'sign-in') return this.#askToSignIn(req, res, target, inbound, serviceHost);
    if (outcome.kind === 'step-up') return this.#stepUp.send(res, { method: req.method, accept: inbound.accept, target, serviceHost }, outcome.needs, outcome.bearer);
    // design.md §5 "bare prefix": past every check, as the app's own answer would be
    const mode = forwardMode(req, inbound);
    if (isBarePrefix(req.method, key, route, mode === 'websocket')) return redirectToEntry(res, route, target.slice(pathEnd));
    // §3.6–3.8 forward, map the response, map failures; a caller's identity assertion (§4.7)
    const assertion = user && this.#assertions.assertionFor(user, route, site?.host);
    const headers = this.#requestHeaders.build(req, inbound, route, clientIp, user, assertion, site?.host, identity);
    const extras: ForwardExtras = { balancing: { clientIp, stickyId: undefined }, record, trace };
    if (mode === 'body') extras.trailerNames = this.#requestHeaders.trailerNames(inbound);
    if (route.pool.sticky) {
      extras.balancing = { clientIp, stickyId: readCookie(inbound.cookie, this.#stickyCookieName) };
      extras.sticky = { name: this.#stickyCookieName, secure: this.#secure };
    }
    sendContinueIfExpected(req, res);
    this.#forwarder.forward(req, res, route, restAfterPrefix(target, path, key, route), headers, mode, extras);
  }

  /**
   * No service matches. `/favicon.ico`, as browsers ask for it, is then the gateway's own icon,
   * served by the admin plane (a service at `/` or at that path gets it instead) where the
   * gateway's paths are served (`gatewayHere`: not on a host only services name); anything else
   * is still counted against the rate limit (a 429 wins), then 404.
   */
  async #unmatched(req: IncomingMessage, res: ServerResponse, path: string, clientIp: string, gatewayHere: boolean): Promise<void> {
    if (gatewayHere && path === FAVICON_PATH) {
      sendContinueIfExpected(req, res);
      return this.#deps.adminPlane(req, res);
    }
    await this.#limitOffPath(clientIp, '');
    throw new GatewayError('SERVICE_NOT_FOUND');
  }

  /**
   * §3.3: the answer to a request over the general limit, counted for `serviceId` ('' for none),
   * and with a matched request's `record` summarised with the refused ones. The proxied request
   * awaits the limiter in its own frame (see rate-limiter.ts `refuseOverLimit`).
   */
  #refusal(decision: RateLimitDecision, serviceId: string, record?: AccessRecord, res?: ServerResponse): GatewayError {
    this.#deps.refusals.rateLimited(serviceId);
    const refusal = overLimit(decision);
    record?.summariseInto(this.#refused, res!, refusal.status);
    return refusal;
  }

  /**
   * §3.3 for a request counted off the hot path (no service matched; a verify request): as the
   * proxied request's count, one more promise.
   * @throws {GatewayError} 429 over the limit (see {@link #refusal}).
   */
  readonly #limitOffPath = async (clientIp: string, serviceId: string, record?: AccessRecord, res?: ServerResponse): Promise<void> => {
    const limiter = this.#deps.generalLimiter;
    if (limiter.limit === null) return;
    const decision = await limiter.consume(rateLimitKey(clientIp));
    if (!decision.allowed) throw this.#refusal(decision, serviceId, record, res);
  };

  /**
   * A protected service's caller without a session (design.md §3.5): 401. On a service host, a
   * browser's navigation (GET or HEAD accepting `text/html`) is sent to the sign-in origin instead
   * (host-sign-in.ts, design.md §4.16), and the 401 page's link goes by the host's own
   * `/.gatehouse/login`.
   */
  #askToSignIn(req: IncomingMessage, res: ServerResponse, target: string, inbound: InboundHeaders, serviceHost: string | undefined): void {
    if (serviceHost === undefined) return sendNotAuthenticated(res, target, inbound.accept, this.#bearerTokens?.challenge);
    if ((req.method === 'GET' || req.method === 'HEAD') && acceptsHtml(inbound.accept)) return this.#hostSignIn.send(res, serviceHost, target);
    sendNotAuthenticated(res, target, inbound.accept, this.#bearerTokens?.challenge, `${SERVICE_HOST_PATHS.login}?rd=`);
  }

  /**
   * The reserved prefix `/.gatehouse/…` on any host (design.md §3.2), never forwarded. On a service
   * host its sign-in paths (design.md §4.16): `login?rd=<path>` answered here, the others by the
   * admin plane, told the host. Anything else, and anything on other hosts, is answered as a path
   * no service matches (the general limit counted, then 404).
   */
  #reserved(req: IncomingMessage, res: ServerResponse, path: string, clientIp: string): Promise<void> | void {
    const routes = this.#routes;
    const site = routes.hasHosts ? routes.siteOf(req.rawHeaders) : undefined;
    if (site !== undefined && !this.#gatewayHosts.has(site.host)) {
      if (path === SERVICE_HOST_PATHS.login && (req.method === 'GET' || req.method === 'HEAD')) {
        const params = new URLSearchParams((req.url ?? '').slice(path.length + 1));
        // a step-up's requirement goes on to the sign-in origin (design.md §4.18); a malformed one is dropped
        return this.#hostSignIn.send(res, site.host, safeReturnTo(params.get('rd')), readStepUpQuery(params) ?? undefined);
      }
      if (path === SERVICE_HOST_PATHS.callback || path === SERVICE_HOST_PATHS.logout || path === SERVICE_HOST_PATHS.csrfToken) {
        sendContinueIfExpected(req, res);
        return this.#deps.adminPlane(req, res, site.host);
      }
    }
    return this.#unmatched(req, res, path, clientIp, false);
  }

  /**
   * Answers a gateway-owned path, judged on the routing key so that no spelling of one reaches a
   * service at `/`: `/.well-known/jwks.json` here (design.md §4.7); `/auth`, `/api`, `/dashboard`
   * and below, and `/` itself while `table` (the request host's) has no service there, by the
   * admin plane. Returns false, having done nothing, for any other path.
   */
  #servedByGateway(req: IncomingMessage, res: ServerResponse, key: string, table: RouteTable): boolean {
    if (key === JWKS_PATH) {
      this.#jwks.serve(req, res);
      return true;
    }
    if (!isGatewayPath(key) && (key !== '/' || table.hasRoot)) return false;
    sendContinueIfExpected(req, res);
    this.#deps.adminPlane(req, res);
    return true;
  }

  #replaceRoutes(services: readonly Service[]): void {
    this.#services = services;
    const onInvalid = (service: Service): void => this.#deps.logger.warn({ serviceId: service.id }, 'service left out of the route table: invalid target url');
    this.#routes = new HostRoutes(services, onInvalid, { book: this.targetHealth, stickyKey: this.#stickyKey });
    this.targetHealth.retain(this.#routes.targetHealth());
    this.#healthChecks.update(this.#routes.routes());
    this.#forwarder.retain(this.#routes.origins());
  }

  /**
   * The sticky cookie's HMAC key (sticky-target.ts): derived from the assertion signing
   * key, the one secret every proxy process shares; the table's target ids follow it.
   */
  #useStickyKey(keys: AssertionKeySet): void {
    this.#stickyKey = createHash('sha256').update('gatehouse sticky target\n').update(keys.signing.d).digest();
    this.#replaceRoutes(this.#services);
  }

  /** Answers a failed step as both planes do (failure-response.ts: a 503 is a page for browsers); the unexpected is logged, then 500. */
  #fail(req: IncomingMessage, res: ServerResponse, error: unknown): void {
    answerFailure(req, res, error, (err) => this.#deps.logger.error({ err, method: req.method, requestId: requestIdOf(res) }, 'proxy request failed'));
  }
}

/**
 * What follows the matched prefix in `target`, as forwarded (design.md §3.6): what is forwarded is
 * what was matched, so it is the raw rest after the prefix's raw spelling (routing-key.ts
 * `remainderAfter`), then the query. On the fast path the key is the path itself, and a slice does.
 */
function restAfterPrefix(target: string, path: string, key: string, route: Route): string {
  if (key === path) return target.slice(route.key.length);
  return remainderAfter(path, route.depth) + target.slice(path.length);
}

/** Marks a request that came through 'checkContinue' and has not had its `100 Continue` yet. */
const kExpectsContinue = Symbol('gatehouse.expectsContinue');
type ContinueCarrier = IncomingMessage & { [kExpectsContinue]?: boolean };

/** `100 Continue` for a request that asked for it (RFC 9110 §10.1.1): its body is wanted now. */
function sendContinueIfExpected(req: IncomingMessage, res: ServerResponse): void {
  if ((req as ContinueCarrier)[kExpectsContinue] !== true) return;
  (req as ContinueCarrier)[kExpectsContinue] = false;
  res.writeContinue();
}
