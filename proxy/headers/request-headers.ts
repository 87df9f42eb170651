import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { TrustedProxies } from '../../shared/http/trusted-proxies.js';
import { GATEWAY_COOKIE_NAMES } from '../../shared/http/cookies.js';
import { PUBLIC_HANDOFF_HEADER } from '../../shared/http/gateway-paths.js';
import type { SessionUser } from '../../shared/types.js';
import { bearerCredentials } from '../auth/bearer-token.js';
import { API_TOKEN_PREFIX } from '../../shared/identity/secrets.js';
import { comparableName, connectionOptions, HOP_BY_HOP } from './hop-by-hop.js';
import type { InboundHeaders } from './inbound-headers.js';
import type { Route } from '../routing/route-table.js';
import { parseTraceParent, parseTraceState } from '../../shared/tracing/trace-context.js';
import type { RequestIdentity } from '../pipeline/request-identity.js';

/**
 * Which rules a {@link RequestHeaderBuilder} applies: `public` for a proxied service, which never
 * sees the gateway's secrets; `admin` for the split-mode hand-off of gateway-owned paths to the
 * admin process (admin-handoff.ts), which needs them (it reads the session cookie and checks
 * `X-CSRF-Token`) and is told that the request came to the public origin.
 */
export type HeaderPolicy = 'public' | 'admin';

/** The identity assertion's field (design.md §4.7), lowercased. */
export const ASSERTION_HEADER = 'x-gatehouse-assertion';

/**
 * Fields never forwarded besides the hop-by-hop ones (design.md §3.6; `Trailer` among them: it is
 * set afresh for the trailer fields that go along, see {@link RequestHeaderBuilder.trailerNames}),
 * compared after lowercasing and reading `_` as `-`:
 * - `host`: undici sets the target's own (RFC 9110 §7.2);
 * - `expect`: the gateway answers `100-continue` itself once it forwards (see proxy-plane.ts), and
 *   undici refuses the field;
 * - identity and forwarding fields a client could spoof: the proxy sets its own (the identity
 *   assertion, design.md §4.7, too). Every `x-forwarded-*` is removed as well (see {@link isRemoved});
 * - path overrides some frameworks believe (`X-Original-URL`, `X-Rewrite-URL`): the upstream must
 *   see exactly the path that was routed and authorised (design.md §3.1);
 * - HTTP/2's pseudo-header fields (RFC 9113 §8.3): the request line's parts, which the forwarded
 *   request carries in its own (`:authority` as `Host`, above).
 */
const REMOVED = [
  ...HOP_BY_HOP,
  'host',
  ':method',
  ':scheme',
  ':authority',
  ':path',
  ':protocol',
  'expect',
  'forwarded',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'x-remote-user',
  'remote-user',
  'x-auth-request-user',
  'x-auth-request-email',
  ASSERTION_HEADER,
  'x-original-url',
  'x-original-uri',
  'x-rewrite-url',
  // set afresh for every request (design.md §3.10): a client's own never reach a target as they came
  'x-request-id',
  'traceparent',
  'tracestate',
];

/**
 * What each policy removes besides {@link REMOVED}: for a service, the gateway's own CSRF token,
 * never meant for an upstream; for the admin process, a client's copy of the public-origin mark,
 * which the hand-off sets itself.
 */
const REMOVED_BY_POLICY: Record<HeaderPolicy, ReadonlySet<string>> = {
  public: new Set([...REMOVED, 'x-csrf-token']),
  admin: new Set([...REMOVED, PUBLIC_HANDOFF_HEADER]),
};

const FORWARDED_PREFIX = 'x-forwarded-';

/**
 * Fields a request's trailer section must not carry besides the removed ones (RFC 9110 §6.5.1:
 * framing, routing, request modifiers, authentication, content metadata). The gateway decides on
 * `Authorization` and `Cookie` from the header section; a trailer must not bring other values
 * past it to an upstream that merges trailers into its headers.
 */
const NOT_IN_TRAILERS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'content-length',
  'content-type',
  'content-encoding',
  'content-range',
  'cache-control',
  'max-forwards',
  'range',
  'if-match',
  'if-none-match',
  'if-modified-since',
  'if-unmodified-since',
  'if-range',
]);

/**
 * Builds the header list sent to a target (design.md §3.6): the proxy's own
 * `X-Forwarded-For/Proto/Host`, then with the `public` policy `X-Forwarded-Prefix` and, with a
 * caller, `X-Forwarded-User/Email` and `X-Gatehouse-Assertion`, with the `admin` policy the
 * public-origin mark (`PUBLIC_HANDOFF_HEADER`, always `1`); then the client's fields minus the
 * removed ones (hop-by-hop per RFC 9110 §7.6.1, those named in `Connection`, `Host`, `Expect`,
 * every client-sent identity or forwarding field, and see {@link REMOVED_BY_POLICY}), with the
 * `public` policy minus the gateway's cookies too. The proxy's fields come first because a target that
 * keeps only its first N fields (Node's `maxHeadersCount`) must lose a client's padding, never them.
 */
export class RequestHeaderBuilder {
  readonly #trusted: TrustedProxies;
  readonly #publicHost: string;
  /** PUBLIC_URL's `:port` when it names one, else `''`: the port a service host is reached on too. */
  readonly #publicPort: string;
  readonly #forAdmin: boolean;
  readonly #removed: ReadonlySet<string>;
  readonly #bearerTokens: boolean;
  readonly #forwardGroups: boolean;

  /**
   * `trusted`: TRUST_PROXY; only such peers may extend X-Forwarded-For (with the hops it
   *   believes: trusted-proxies.ts) and set X-Forwarded-Proto.
   * `publicUrl`: PUBLIC_URL, whose host is `X-Forwarded-Host` for every request but a host
   *   service's (see {@link build}), and whose port is a host service's too.
   * `policy`: whom the list is for (see {@link HeaderPolicy}).
   * `bearerTokens`: whether protected services take bearer tokens (OIDC_API_AUDIENCES, design.md
   * §4.7); their `Authorization: Bearer` then reaches only a service with `forwardAuthorization`.
   * `forwardGroups`: FORWARD_GROUPS, whether a caller's groups go as `X-Forwarded-Groups`.
   */
  constructor(trusted: TrustedProxies, publicUrl: URL, policy: HeaderPolicy = 'public', bearerTokens = false, forwardGroups = false) {
    this.#publicHost = publicUrl.host;
    this.#publicPort = publicUrl.port === '' ? '' : `:${publicUrl.port}`;
    this.#trusted = trusted;
    this.#forAdmin = policy === 'admin';
    this.#removed = REMOVED_BY_POLICY[policy];
    this.#bearerTokens = bearerTokens;
    this.#forwardGroups = forwardGroups;
  }

  /**
   * The flat `[name, value, …]` list for undici. `route` is the service's (undefined for the
   * admin process); `clientIp` the resolved client address; `user` the session's user, or
   * undefined for an anonymous request (and for the admin process, which reads the session itself);
   * `assertion` the identity assertion signed for `user` (identity-assertion.ts); `serviceHost`
   * the request's host name when a service names it (host-routes.ts, design.md §3.2), which is
   * then `X-Forwarded-Host` with PUBLIC_URL's port (the one listener serves both), else undefined;
   * `identity` the request's id and trace (design.md §3.10), sent on as {@link propagate} says.
   */
  build(
    req: IncomingMessage,
    inbound: InboundHeaders,
    route: Route | undefined,
    clientIp: string,
    user: SessionUser | undefined,
    assertion?: string,
    serviceHost?: string,
    identity?: RequestIdentity,
  ): string[] {
    const peer = req.socket.remoteAddress ?? '';
    const trusted = peer !== '' && this.#trusted.trusts(peer);
    const out = [
      'x-forwarded-for',
      // The admin process trusts the proxy that hands off to it, not necessarily the hops before
      // it (TRUST_PROXY of its own), so it gets the address this proxy resolved, not the chain.
      // A service gets a trusted peer's hops with the peer appended, each a bare IP address (a
      // reported value that is none is not passed on); otherwise the client address alone.
      this.#forAdmin || !trusted ? clientIp : this.#trusted.hops(req).join(', '),
      'x-forwarded-proto',
      forwardedProto(req, inbound, trusted),
      // PUBLIC_URL's, never the client's Host: upstreams build absolute links (password-reset
      // mails) from it, so a client must not choose it. On a service's own host, that host: one
      // the registry names (or one label under its wildcard), with PUBLIC_URL's port, never the
      // client's spelling or port.
      'x-forwarded-host',
      serviceHost === undefined ? this.#publicHost : serviceHost + this.#publicPort,
    ];
    if (this.#forAdmin) out.push(PUBLIC_HANDOFF_HEADER, '1'); // see admin/http/served-origin.ts
    if (identity !== undefined) propagate(identity, inbound, out);
    if (route !== undefined && route.prefix !== '') out.push('x-forwarded-prefix', route.prefix);
    if (user) pushIdentityFields(out, user, assertion, this.#forwardGroups);
    this.#copyAllowed(req.rawHeaders, inbound, out, route !== undefined && this.#withholdsBearerFrom(route), req.httpVersionMajor === 2);
    return out;
  }

  /**
   * The trailer fields of a chunked request to forward to a service (RFC 9110 §6.6.2), lowercased:
   * those its `Trailer` announces that a header of that name could be forwarded too and that
   * RFC 9110 §6.5.1 allows in trailers. Undefined when none is left (or the body is not chunked):
   * the request then goes without trailers. The same fields are picked from the trailer section
   * when it arrives (see trailer-dispatch.ts).
   */
  trailerNames(inbound: InboundHeaders): string[] | undefined {
    if (!inbound.chunked || inbound.trailer === undefined || this.#forAdmin) return undefined;
    const options = connectionOptions(inbound.connection);
    let names: string[] | undefined;
    for (const token of inbound.trailer.split(',')) {
      const name = token.trim().toLowerCase();
      if (name === '' || NOT_IN_TRAILERS.has(comparableName(name)) || isRemoved(name, this.#removed, options)) continue;
      if (!names?.includes(name)) (names ??= []).push(name);
    }
    return names;
  }

  /**
   * Whether `route`'s service must not see a client's bearer token (design.md §4.7): a protected
   * one, while bearer tokens are on, unless it asks for them with `forwardAuthorization`.
   */
  #withholdsBearerFrom(route: Route): boolean {
    return this.#bearerTokens && route.service.requireAuth && route.service.forwardAuthorization !== true;
  }

  /**
   * Appends to `out` the client's fields that may be forwarded; a service's without the gateway's
   * cookies and admin API tokens, and without any `Authorization: Bearer` when `withoutBearer`.
   * With `joinCookies` (an HTTP/2 request, whose client may split its cookies into several fields),
   * they go as one `Cookie` field where the first was, as RFC 9113 §8.2.3 asks of a request
   * forwarded over HTTP/1.1.
   */
  #copyAllowed(raw: readonly string[], inbound: InboundHeaders, out: string[], withoutBearer: boolean, joinCookies: boolean): void {
    const options = connectionOptions(inbound.connection);
    let cookieSent = false;
    for (let i = 0; i < raw.length; i += 2) {
      const name = inbound.names[i >> 1]!;
      if (isRemoved(name, this.#removed, options)) continue;
      if (name === 'authorization' && !this.#forAdmin && isWithheldAuthorization(raw[i + 1]!, withoutBearer)) continue;
      let value = raw[i + 1]!;
      if (name === 'cookie') {
        if (joinCookies && cookieSent) continue;
        cookieSent = true;
        if (joinCookies) value = inbound.cookie!;
        if (!this.#forAdmin) value = withoutGatewayCookies(value);
      }
      if (value !== '') out.push(raw[i]!, value);
    }
  }
}

/**
 * Appends a caller's identity fields to the flat list `out` (design.md §3.6): `X-Forwarded-User`
 * (sub), `X-Forwarded-Email` when the user has one, with `groups` (FORWARD_GROUPS)
 * `X-Forwarded-Groups` when the user has some, `X-Gatehouse-Assertion` when signed (§4.7).
 * The one place these names are written: what a target gets, and what the verify endpoint
 * answers an ingress with (design.md §4.19).
 */
export function pushIdentityFields(out: string[], user: SessionUser, assertion: string | undefined, groups: boolean): void {
  out.push('x-forwarded-user', fieldValue(user.sub));
  if (user.email) out.push('x-forwarded-email', fieldValue(user.email));
  if (groups && user.groups !== undefined && user.groups.length > 0) out.push('x-forwarded-groups', groupsValue(user.groups));
  if (assertion !== undefined) out.push(ASSERTION_HEADER, assertion);
}

/** What a group name keeps as it is in `X-Forwarded-Groups`: printable ASCII but `%` and `,`. */
const GROUP_ESCAPED = /[^\x20-\x24\x26-\x2b\x2d-\x7e]/gu;

/** A character's UTF-8 bytes as `%XX` (a lone surrogate as U+FFFD's, which encodeURIComponent would throw on). */
function percentEncoded(character: string): string {
  return Buffer.from(character, 'utf8').toString('hex').toUpperCase().replace(/../g, '%$&');
}

/**
 * `X-Forwarded-Groups`' value (FORWARD_GROUPS): the groups comma-separated, in each one `%`, `,`
 * and what is not printable ASCII percent-encoded as UTF-8 (RFC 3986 §2.1), so a group named
 * `a,b` is never read as two, and a name beyond ASCII arrives intact.
 */
function groupsValue(groups: readonly string[]): string {
  return groups.map((group) => group.replace(GROUP_ESCAPED, percentEncoded)).join(',');
}

/**
 * True for an `Authorization` value a service must not get: any bearer token when `withoutBearer`
 * (design.md §4.7), and always the gateway's own admin API tokens (`ght_…`, design.md §4.8),
 * credentials of the gateway like its cookies, whichever service a client sends them to.
 */
function isWithheldAuthorization(value: string, withoutBearer: boolean): boolean {
  const token = bearerCredentials(value);
  return token !== undefined && (withoutBearer || token.startsWith(API_TOKEN_PREFIX));
}

/**
 * True for a lowercased field name not to forward: one in `removed`, any `x-forwarded-*`, or one
 * of `options`, the names `Connection` lists.
 */
function isRemoved(lowercased: string, removed: ReadonlySet<string>, options: string[] | undefined): boolean {
  const name = comparableName(lowercased);
  return (
    removed.has(name) || name.startsWith(FORWARDED_PREFIX) || (options !== undefined && options.includes(name))
  );
}

/**
 * A `Cookie` value without the gateway's own cookies (RFC 6265 §5.4 `name=value; …`), or `''`
 * when nothing else is left. Values without `gw_` are returned as they are.
 */
export function withoutGatewayCookies(header: string): string {
  if (!header.includes('gw_')) return header;
  const kept: string[] = [];
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    const name = (eq === -1 ? pair : pair.slice(0, eq)).trim();
    if (name !== '' && !GATEWAY_COOKIE_NAMES.has(name)) kept.push(pair.trim());
  }
  return kept.join('; ');
}

/** `X-Forwarded-Proto`: a trusted peer's `http`/`https`, otherwise the inbound connection's. */
function forwardedProto(req: IncomingMessage, inbound: InboundHeaders, trusted: boolean): string {
  if (trusted && inbound.forwardedProto !== undefined) {
    const comma = inbound.forwardedProto.indexOf(',');
    const first = (comma === -1 ? inbound.forwardedProto : inbound.forwardedProto.slice(0, comma)).trim().toLowerCase();
    if (first === 'http' || first === 'https') return first;
  }
  return (req.socket as TLSSocket).encrypted === true ? 'https' : 'http';
}

/** Printable ASCII: a field value that needs no care (RFC 9110 §5.5). */
const PLAIN_FIELD_VALUE = /^[\x20-\x7e]*$/;
/** Control characters, never allowed in a field value (RFC 9110 §5.5). */
const CONTROLS = /[\x00-\x1f\x7f]/g;

/**
 * An identity claim as a field value: controls removed, and anything beyond ASCII sent as its
 * UTF-8 bytes (what undici accepts and what most upstream stacks decode), so an unusual `sub` or
 * an internationalised email never makes undici refuse the request.
 */
function fieldValue(claim: string): string {
  if (PLAIN_FIELD_VALUE.test(claim)) return claim;
  return Buffer.from(claim.replace(CONTROLS, ''), 'utf8').toString('latin1');
}

/**
 * The request's id as `X-Request-Id`, and its trace context (W3C Trace Context): with tracing on, a
 * `traceparent` of the gateway's trace unless the request is sampled (each attempt then names its
 * own client span: exchange.ts) and the continued `tracestate`; with tracing off, the client's
 * own fields when they are well formed, as a proxy that does not trace passes them (malformed
 * ones never).
 */
function propagate(identity: RequestIdentity, inbound: InboundHeaders, out: string[]): void {
  out.push('x-request-id', identity.requestId);
  const { trace } = identity;
  if (trace === undefined) {
    if (parseTraceParent(inbound.traceparent) === undefined) return;
    out.push('traceparent', inbound.traceparent!);
    const state = parseTraceState(inbound.tracestate);
    if (state !== undefined) out.push('tracestate', state);
  } else if (!trace.sampled) {
    out.push('traceparent', trace.traceParent());
    if (trace.traceState !== undefined) out.push('tracestate', trace.traceState);
  }
}
