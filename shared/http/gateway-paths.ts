/**
 * The identity assertion's public keys (design.md §4.7), answered by the data plane itself from
 * its key set (proxy/auth/jwks-endpoint.ts); anything under it goes to the admin plane like the other
 * gateway paths (and is not found there).
 */
export const JWKS_PATH = '/.well-known/jwks.json';

/**
 * Paths the gateway serves itself (design.md §2): the data plane hands them to the admin plane
 * (all but {@link JWKS_PATH} itself), and no service may be registered at or under them. `/` is
 * the gateway's home page only while no service is registered at `/`.
 */
export const GATEWAY_PREFIXES: readonly string[] = ['/auth', '/api', '/dashboard', JWKS_PATH];

/**
 * True when `key` is `/p` or under `/p/` for a gateway prefix. `key` is a routing key
 * (shared/routing/routing-key.ts: decoded, lowercased, separators collapsed), never a raw path, so that no
 * spelling of a gateway path (`/API/services`, `/%61uth/x`, `//dashboard`) reaches a service
 * registered at `/`. A registered service path's key is its lowercase form.
 */
export function isGatewayPath(key: string): boolean {
  for (const prefix of GATEWAY_PREFIXES) if (isAtOrUnder(key, prefix)) return true;
  return false;
}

/** True when `key` is `prefix` or starts with `prefix/`. */
function isAtOrUnder(key: string, prefix: string): boolean {
  return key.startsWith(prefix) && (key.length === prefix.length || key.charCodeAt(prefix.length) === 47);
}

/**
 * The auth decision an ingress asks for (design.md §4.19: nginx `auth_request`, Traefik
 * `ForwardAuth`, Caddy `forward_auth`, Envoy `ext_authz`): under `/auth`, but answered by the data
 * plane itself in both modes (never handed to the admin process), on the gateway's hosts. Compared
 * with a routing key, so `/AUTH/verify` is it too.
 */
export const VERIFY_PATH = '/auth/verify';

/**
 * True when `key` (a routing key) is {@link VERIFY_PATH} or under it: under it is the suffix form
 * `/auth/verify/<original path>` (Envoy `ext_authz`'s `path_prefix`, design.md §4.19).
 */
export function isVerifyPath(key: string): boolean {
  return isAtOrUnder(key, VERIFY_PATH);
}

/**
 * The gateway's reserved prefix on every host (design.md §3.2), services' own hosts included:
 * nothing under it is ever forwarded to a service. On a service host it holds the sign-in's
 * paths below; elsewhere nothing.
 */
export const RESERVED_PREFIX = '/.gatehouse';

/**
 * A service host's sign-in paths (design.md §4.16): `login` (answered by the data plane: off to the
 * sign-in origin), then `callback` (redeems a hand-off code), `logout` and `csrf-token` (the host
 * session's), answered by the admin plane.
 */
export const SERVICE_HOST_PATHS = {
  login: `${RESERVED_PREFIX}/login`,
  callback: `${RESERVED_PREFIX}/callback`,
  logout: `${RESERVED_PREFIX}/logout`,
  csrfToken: `${RESERVED_PREFIX}/csrf-token`,
} as const;

/**
 * True when `key`, a routing key (as for {@link isGatewayPath}, so `/.GATEHOUSE/x`,
 * `/%2Egatehouse/x` and `//.gatehouse/x` all count), is {@link RESERVED_PREFIX} or under it.
 */
export function isReservedPath(key: string): boolean {
  // every request asks: most keys are turned away by their second character
  return key.charCodeAt(1) === 0x2e && isAtOrUnder(key, RESERVED_PREFIX);
}

/**
 * Where the identity provider posts logout tokens (OpenID Connect Back-Channel Logout 1.0 §2.5),
 * `<PUBLIC_URL>/auth/backchannel-logout`: a server-to-server call, outside CSRF and the browser
 * rate limits.
 */
export const BACKCHANNEL_LOGOUT_PATH = '/auth/backchannel-logout';

/**
 * Request field a proxy process sets on every gateway-owned request it hands to the admin process
 * (split mode), so the admin plane answers it as the public origin rather than as ADMIN_URL's
 * (see admin/http/served-origin.ts). A client's own copy is overwritten by the proxy.
 */
export const PUBLIC_HANDOFF_HEADER = 'x-gatehouse-public-origin';

/**
 * The icon browsers ask every origin for (no `<link rel="icon">` needed). The gateway serves its
 * own when no service matches this path, so a gateway page's tab has an icon and the request is
 * not a 404 in every access log.
 */
export const FAVICON_PATH = '/favicon.ico';
