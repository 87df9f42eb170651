import { parse } from 'cookie';

/**
 * The gateway's own cookies (DESIGN §4). On an https PUBLIC_URL they carry the `__Host-` prefix
 * (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain), which browsers refuse to let a sibling host set.
 */
export interface GatewayCookieNames {
  /** `gw_session` / `__Host-gw_session`: the session id. */
  session: string;
  /** `gw_oidc` / `__Host-gw_oidc`: binds an OpenID Connect login transaction to this browser. */
  transaction: string;
}

/** Every name the gateway may use, in both forms: stripped from proxied requests and responses. */
export const GATEWAY_COOKIE_NAMES: ReadonlySet<string> = new Set([
  'gw_session',
  '__Host-gw_session',
  'gw_oidc',
  '__Host-gw_oidc',
]);

/** Cookie names for a deployment reached at `publicUrl`. */
export function gatewayCookieNames(publicUrl: URL): GatewayCookieNames {
  const prefix = publicUrl.protocol === 'https:' ? '__Host-' : '';
  return { session: `${prefix}gw_session`, transaction: `${prefix}gw_oidc` };
}

/** The value of cookie `name` in a `Cookie` header (RFC 6265 §5.4), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header || !header.includes(name)) return undefined;
  return parse(header)[name];
}
