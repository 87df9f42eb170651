import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import { GatewayError } from '../../shared/errors.js';
import { isGatewayPath, isReservedPath, SERVICE_HOST_PATHS, VERIFY_PATH } from '../../shared/http/gateway-paths.js';
import { withRequestId } from '../../shared/http/request-id.js';
import { isClientGone } from '../../shared/http/response-state.js';
import type { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import type { SessionUser } from '../../shared/types.js';
import type { IdentityAssertions } from '../auth/identity-assertion.js';
import type { InboundHeaders } from '../headers/inbound-headers.js';
import { pushIdentityFields } from '../headers/request-headers.js';
import type { HostRoutes, HostSite } from '../routing/host-routes.js';
import { hostField, requestHostName } from '../routing/request-host.js';
import { serviceHostOrigin } from '../../shared/services/host-names.js';
import type { Route } from '../routing/route-table.js';
import type { AccessDecision, AccessOutcome } from './access-decision.js';
import { insufficientUserAuthentication, stepUpRequiredError, stepUpSignIn } from './step-up-required.js';
import { sendError } from '../../shared/http/http-response.js';
import type { StepUp } from '../../shared/identity/step-up.js';
import { sendAccessDenied } from './access-denied.js';
import { AccessRecord } from './access-record.js';
import { sendNotAuthenticated } from './login-required.js';
import { readOriginalRequest, readSuffixRequest, type OriginalRequest } from './original-request.js';
import type { RequestIdentity } from './request-identity.js';
import { sendServiceDisabled } from './service-disabled.js';

/** What the verify endpoint shares with the data plane that hosts it (proxy-plane.ts). */
export interface VerifyEndpointDeps {
  /** PUBLIC_URL: the sign-in's origin, and the scheme and port of service hosts (design.md §4.16). */
  readonly publicUrl: URL;
  /** TRUST_PROXY: only these peers may name the original request. */
  readonly trusted: TrustedProxies;
  /** The data plane's decision, the very one a proxied request gets. */
  readonly decision: AccessDecision;
  readonly assertions: IdentityAssertions;
  /** The current registry snapshot's tables (they change with every snapshot). */
  readonly routes: () => HostRoutes;
  /** PUBLIC_URL's and ADMIN_URL's host names: the gateway's paths are no service's there (design.md §3.2). */
  readonly gatewayHosts: ReadonlySet<string>;
  readonly accessLog: AccessLogSink;
  /**
   * The general limit (design.md §3.3) for the client address and service (`''` for none), as the
   * data plane counts a request off its hot path; a matched request's `record` is summarised with
   * the refused ones when over it. @throws {GatewayError} 429 over the limit.
   */
  readonly limit: (clientIp: string, serviceId: string, record?: AccessRecord, res?: ServerResponse) => Promise<void>;
  /** `WWW-Authenticate` of a 401 while bearer tokens are on (RFC 6750 §3). */
  readonly challenge: Record<string, string> | undefined;
  /** FORWARD_GROUPS: the answer names the caller's groups too. */
  readonly forwardGroups: boolean;
}

/** The methods the endpoint answers (an ingress asks with GET; nginx's `proxy_method GET`). */
const ALLOW = 'GET, HEAD';

/**
 * `GET /auth/verify` (design.md §4.19): the data plane's auth decision for a request an ingress
 * (nginx `auth_request`, Traefik `ForwardAuth`, Caddy `forward_auth`, HAProxy, Envoy `ext_authz`)
 * is about to forward itself. The original request is read from a TRUST_PROXY peer's fields
 * (original-request.ts), routed as the gateway would route it (host, then the routing key's
 * longest prefix) and decided by {@link AccessDecision}. Answers: 200 with the identity fields a
 * target would get; 401 with `Location` the sign-in that returns to the original request; 403; 503
 * for a disabled service; 404 where no service matches; never 202 (Envoy reads only 200 as allowed).
 * Another peer's fields are ignored and it gets 403: it cannot name a host or path to be judged.
 */
export class VerifyEndpoint {
  readonly #deps: VerifyEndpointDeps;
  /** `<PUBLIC_URL>/auth/login?returnTo=`. */
  readonly #login: string;

  constructor(deps: VerifyEndpointDeps) {
    this.#deps = deps;
    this.#login = `${deps.publicUrl.origin}/auth/login?returnTo=`;
  }

  /**
   * Answers `req` (its `inbound` fields, `identity` and resolved `clientIp` as the pipeline read
   * them; `path` its raw path, `key` that path's routing key: {@link VERIFY_PATH}, or under it for
   * the suffix form). The general rate limit counts it, and a request matched to a service is
   * access-logged with the original method and target, marked `verify`.
   * @throws {GatewayError} 405 for a method but GET or HEAD (the suffix form takes any: it is the
   *   original's), 400 for an ambiguous or malformed original request, 403 for an untrusted peer
   *   or one naming none, 404 where no service matches, 429 over the general limit; what
   *   {@link AccessDecision.decide} throws.
   */
  async answer(req: IncomingMessage, res: ServerResponse, inbound: InboundHeaders, identity: RequestIdentity, clientIp: string, path: string, key: string): Promise<void> {
    const suffix = key !== VERIFY_PATH;
    if (!suffix && req.method !== 'GET' && req.method !== 'HEAD') throw new GatewayError('METHOD_NOT_ALLOWED', { headers: { allow: ALLOW } });
    const original = this.trusts(req) ? this.#originalOf(req, inbound, path, suffix) : undefined;
    const site = original && this.#siteOf(original, req);
    const route = original && this.#routeOf(original, site);
    if (route === undefined) {
      await this.#deps.limit(clientIp, '');
      throw original === undefined ? new GatewayError('ACCESS_DENIED', { message: 'Access denied: not a trusted proxy naming the original request' }) : new GatewayError('SERVICE_NOT_FOUND');
    }
    const record = new AccessRecord(this.#deps.accessLog, res, route.service.id, original!.method, original!.target, clientIp);
    if (site !== undefined) record.host = site.host;
    record.requestId = identity.requestId;
    record.http2 = req.httpVersionMajor === 2;
    const { trace } = identity;
    if (trace?.span !== undefined) record.trace = { traceId: trace.traceId, spanId: trace.spanId! };
    record.verify = true;
    await this.#deps.limit(clientIp, route.service.id, record, res);
    const serviceHost = site === undefined || this.#deps.gatewayHosts.has(site.host) ? undefined : site.host;
    const decidedOn = { method: original!.method, headers: req.headers };
    const outcome = await this.#deps.decision.decide({ req: decidedOn, inbound, route, key: original!.key, serviceHost, identity });
    const { user } = outcome;
    if (user !== undefined) record.userId = user.sub;
    if (isClientGone(res)) return;
    switch (outcome.kind) {
      case 'allow':
        return this.#allow(res, route, user, site?.host);
      case 'disabled':
        return sendServiceDisabled(res, route.service, inbound.accept);
      case 'deny':
        return sendAccessDenied(res, route.service, user, inbound.accept);
      case 'sign-in':
        return this.#signIn(res, original!.target, inbound, serviceHost);
      case 'step-up':
        return this.#stepUp(res, original!.target, serviceHost, outcome.needs, outcome.bearer);
      default: {
        // A new outcome must be answered here before the build passes.
        const unhandled: never = outcome;
        throw new Error(`verify: unhandled outcome ${String((unhandled as AccessOutcome).kind)}`);
      }
    }
  }

  /**
   * Whether `req` comes from a TRUST_PROXY peer, the only one whose word on the original request
   * counts. Its verify requests are answered on every host: an ingress that keeps the original
   * `Host` (Caddy, Envoy) may name a service host, whose app must never answer in the gateway's place.
   */
  trusts(req: IncomingMessage): boolean {
    const peer = req.socket.remoteAddress ?? '';
    return peer !== '' && this.#deps.trusted.trusts(peer);
  }

  /** The original request a trusted peer names, in fields or (`suffix`) by the verify request itself. */
  #originalOf(req: IncomingMessage, inbound: InboundHeaders, path: string, suffix: boolean): OriginalRequest | undefined {
    if (!suffix) return readOriginalRequest(req.rawHeaders, inbound.names);
    return readSuffixRequest(req.method ?? 'GET', req.url ?? path, path, req.rawHeaders, inbound.names);
  }

  /**
   * The site the original host names (host-routes.ts; undefined: the host-less table). The
   * ingress's `X-Forwarded-Host`, else the verify request's own `Host` (an ingress that keeps it).
   */
  #siteOf(original: OriginalRequest, req: IncomingMessage): HostSite | undefined {
    const routes = this.#deps.routes();
    if (!routes.hasHosts) return undefined;
    const host = requestHostName(original.host ?? hostField(req.rawHeaders));
    const table = host === undefined ? undefined : routes.tableFor(host);
    return table === undefined ? undefined : { host: host!, table };
  }

  /**
   * The route the data plane would pick (design.md §3.2): none for the reserved prefix, nor, on the
   * gateway's hosts, for its own paths (`/auth`, `/api`, …, and `/` without a root service).
   */
  #routeOf(original: OriginalRequest, site: HostSite | undefined): Route | undefined {
    const { key } = original;
    const table = site?.table ?? this.#deps.routes().hostless;
    const gatewayHere = site === undefined || this.#deps.gatewayHosts.has(site.host);
    if (isReservedPath(key) || (gatewayHere && (isGatewayPath(key) || (key === '/' && !table.hasRoot)))) return undefined;
    return table.lookup(key);
  }

  /** 200, no content, with the caller's identity fields (request-headers.ts names them) when there is a caller. */
  #allow(res: ServerResponse, route: Route, user: SessionUser | undefined, host: string | undefined): void {
    const fields: string[] = [];
    if (user !== undefined) pushIdentityFields(fields, user, this.#deps.assertions.assertionFor(user, route, host), this.#deps.forwardGroups);
    const headers: Record<string, string> = { 'content-length': '0', 'cache-control': 'no-store' };
    for (let i = 0; i < fields.length; i += 2) headers[fields[i]!] = fields[i + 1]!;
    res.writeHead(200, withRequestId(res, headers)).end();
  }

  /**
   * 401 with `Location`, the sign-in that comes back to the original request: on a service host
   * its own `/.gatehouse/login?rd=` (design.md §4.16), else PUBLIC_URL's `/auth/login?returnTo=`.
   * Traefik and Caddy pass the answer on; nginx reads the field with `auth_request_set`.
   */
  #signIn(res: ServerResponse, target: string, inbound: InboundHeaders, serviceHost: string | undefined): void {
    const login = serviceHost === undefined ? this.#login : `${serviceHostOrigin(this.#deps.publicUrl, serviceHost)}${SERVICE_HOST_PATHS.login}?rd=`;
    res.setHeader('location', login + encodeURIComponent(target));
    sendNotAuthenticated(res, target, inbound.accept, this.#deps.challenge, serviceHost === undefined ? undefined : `${SERVICE_HOST_PATHS.login}?rd=`);
  }

  /**
   * A caller short of the service's step-up (design.md §4.18): for a session, 401 with `Location` the
   * step-up sign-in (`max_age`, `acr_values`) that returns to the original request, as for a missing
   * session; for a bearer token, 401 `insufficient_user_authentication` (RFC 9470 §3).
   */
  #stepUp(res: ServerResponse, target: string, serviceHost: string | undefined, needs: StepUp, bearer: boolean): void {
    if (bearer) return sendError(res, insufficientUserAuthentication(needs));
    const origin = serviceHost === undefined ? this.#deps.publicUrl.origin : serviceHostOrigin(this.#deps.publicUrl, serviceHost);
    res.setHeader('location', stepUpSignIn(target, needs, serviceHost !== undefined, origin));
    sendError(res, stepUpRequiredError());
  }
}
