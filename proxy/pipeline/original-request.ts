import { GatewayError } from '../../shared/errors.js';
import { isCanonicalPath, pathLength } from '../../shared/routing/canonical-path.js';
import { remainderAfter, routingKey } from '../../shared/routing/routing-key.js';

/**
 * The request an ingress asks the verify endpoint about (design.md §4.19), as read from the
 * forwarding fields of a TRUST_PROXY peer.
 */
export interface OriginalRequest {
  /** The original method as sent (a token, RFC 9110 §9.1); `GET` when the ingress names none. */
  readonly method: string;
  /** The original request-target in origin-form, path and query, raw as received by the ingress. */
  readonly target: string;
  /** Its path's routing key (routing-key.ts), what the route and the rules are chosen on. */
  readonly key: string;
  /** The original `Host` (X-Forwarded-Host), or undefined: the verify request's own then. */
  readonly host: string | undefined;
}

/**
 * Where each ingress puts the original request (lowercased names): Traefik and Caddy
 * `X-Forwarded-Method`/`-Uri`/`-Host`; nginx's usual `X-Original-Method`/`X-Original-URI`.
 */
const METHOD_FIELDS: ReadonlySet<string> = new Set(['x-forwarded-method', 'x-original-method']);
const URI_FIELDS: ReadonlySet<string> = new Set(['x-forwarded-uri', 'x-original-uri']);
const HOST_FIELD = 'x-forwarded-host';

/** RFC 9110 §5.6.2 `token`: what a method is (§9.1). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Reads the original request from a trusted ingress's fields (`raw`: `req.rawHeaders`, `names`
 * their lowercased names). Each of method, URI and host must be said once: two fields naming
 * different values (`X-Forwarded-Uri` beside another `X-Original-URI`, or a field sent twice)
 * could mean one request to the gateway and another to the ingress, so they are refused. The URI
 * must pass the data plane's own first step (design.md §3.1: origin-form, no `#`, no dot segment
 * once decoded, no NUL, no malformed escape) and is keyed as a proxied request's path is.
 * @returns undefined when the peer named no original URI (nothing to judge).
 * @throws {GatewayError} `BAD_REQUEST` for an ambiguous or malformed original request.
 */
export function readOriginalRequest(raw: readonly string[], names: readonly string[]): OriginalRequest | undefined {
  let method: string | undefined;
  let target: string | undefined;
  let host: string | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    const value = raw[2 * i + 1]!.trim();
    if (METHOD_FIELDS.has(name)) method = once(method, value);
    else if (URI_FIELDS.has(name)) target = once(target, value);
    else if (name === HOST_FIELD) host = once(host, value);
  }
  if (target === undefined) return undefined;
  return checked(method ?? 'GET', target, host);
}

/** The verify path's two segments (`/auth/verify`), after which the suffix form's original path starts. */
const VERIFY_DEPTH = 2;

/**
 * The original request of the suffix form, `<method> /auth/verify<path>?<query>` with the
 * original `Host` (how Envoy's `ext_authz` HTTP service asks, its `path_prefix` `/auth/verify`):
 * the verify request's own method, its target after the verify path (`path` its path, already
 * through the data plane's first step), the ingress's `X-Forwarded-Host` if it sends one. A
 * field naming the original URI as well is refused, as in {@link readOriginalRequest}.
 * @throws {GatewayError} `BAD_REQUEST` for an ambiguous or malformed original request.
 */
export function readSuffixRequest(method: string, target: string, path: string, raw: readonly string[], names: readonly string[]): OriginalRequest {
  let host: string | undefined;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (URI_FIELDS.has(name) || METHOD_FIELDS.has(name)) throw new GatewayError('BAD_REQUEST');
    if (name === HOST_FIELD) host = once(host, raw[2 * i + 1]!.trim());
  }
  return checked(method, remainderAfter(path, VERIFY_DEPTH) + target.slice(path.length), host);
}

/** The original request once its parts pass the data plane's checks (design.md §3.1). */
function checked(method: string, target: string, host: string | undefined): OriginalRequest {
  if (!TOKEN.test(method)) throw new GatewayError('BAD_REQUEST');
  if (host !== undefined && (host === '' || host.includes(','))) throw new GatewayError('BAD_REQUEST');
  const pathEnd = pathLength(target);
  if (!isCanonicalPath(target, pathEnd)) throw new GatewayError('BAD_REQUEST');
  return { method, target, key: routingKey(target.slice(0, pathEnd)), host };
}

/** `value` when nothing was said before or the same was; a different second value is refused. */
function once(seen: string | undefined, value: string): string {
  if (seen !== undefined && seen !== value) throw new GatewayError('BAD_REQUEST');
  return value;
}
