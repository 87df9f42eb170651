import { parse } from 'cookie';

/**
 * The gateway's own cookies (design.md §4). On an https PUBLIC_URL they carry the `__Host-` prefix
 * (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain), which browsers refuse to let a sibling host set.
 */
export interface GatewayCookieNames {
  /** `gw_session` / `__Host-gw_session`: the session id. */
  session: string;
  /** `gw_oidc` / `__Host-gw_oidc`: binds an OpenID Connect login transaction to this browser. */
  transaction: string;
  /**
   * `gw_handoff` / `__Host-gw_handoff`: set on a service host when it sends the browser to sign in,
   * binding the session the sign-in origin hands back to this browser (design.md §4.16). The public
   * origin's names only: the admin origin hands nothing over.
   */
  handoff: string;
}

/**
 * Every name the gateway may use, in both forms and for both origins (the admin origin's names
 * carry `admin_`), and the sticky target cookie: stripped from proxied requests and responses. Cookies ignore ports (RFC 6265
 * §8.5), so with PUBLIC_URL and ADMIN_URL on one host the browser sends the admin origin's cookies
 * to the public port too: they must never reach an upstream.
 */
export const GATEWAY_COOKIE_NAMES: ReadonlySet<string> = new Set([
  ...['gw_session', 'gw_oidc', 'gw_handoff', 'gw_admin_session', 'gw_admin_oidc'].flatMap((name) => [name, `__Host-${name}`]),
  // the sticky cookie of `loadBalancing: cookie` (proxy/pool/sticky-target.ts)
  'gw_target',
  '__Secure-gw_target',
]);

/**
 * Cookie names for the origin `url` (PUBLIC_URL, or ADMIN_URL with `kind` `admin`): each origin
 * has its own session, so a page of a proxied app, which shares the public origin, never holds
 * the admin origin's session or its CSRF token (design.md §4.5).
 */
export function gatewayCookieNames(url: URL, kind: 'public' | 'admin' = 'public'): GatewayCookieNames {
  const prefix = url.protocol === 'https:' ? '__Host-' : '';
  const scope = kind === 'admin' ? 'admin_' : '';
  return { session: `${prefix}gw_${scope}session`, transaction: `${prefix}gw_${scope}oidc`, handoff: `${prefix}gw_handoff` };
}

/** The value of cookie `name` in a `Cookie` header (RFC 6265 §5.4), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || !header.includes(name)) return undefined;
  return parse(header)[name];
}
