import { createHmac } from 'node:crypto';
import { serialize } from 'cookie';

/**
 * The sticky cookie of `loadBalancing: cookie`: it names the target a browser was given, so its
 * next requests go there too. Its value is an HMAC-SHA256 of the service id and the target's url
 * under a key every proxy process shares (derived from the identity assertion's signing key), cut
 * to 128 bits: opaque (it names no internal address) and unforgeable (a made-up value names no
 * target, and is balanced as no cookie is). Scoped to the service's prefix, so each service has
 * its own. The key changes with the assertion key's rotation (ASSERTION_KEY_LIFETIME): clients are
 * then balanced afresh once.
 */

/** `gw_target`, or `__Secure-gw_target` on an https PUBLIC_URL (RFC 6265bis §4.1.3.1). */
export function stickyCookieName(publicUrl: URL): string {
  return publicUrl.protocol === 'https:' ? '__Secure-gw_target' : 'gw_target';
}

/** The id of target `url` of service `serviceId` under `key`: 22 base64url characters. */
export function stickyTargetId(key: Buffer, serviceId: string, url: string): string {
  return createHmac('sha256', key).update(`${serviceId}\n${url}`).digest('base64url').slice(0, 22);
}

/**
 * The `Set-Cookie` value naming target `id` for the service at `prefix` (`''` for `/`): HttpOnly,
 * SameSite=Lax, Secure on https, no expiry (it lasts as long as the browser's session).
 */
export function stickyCookie(name: string, id: string, prefix: string, secure: boolean): string {
  return serialize(name, id, { path: prefix || '/', httpOnly: true, sameSite: 'lax', secure });
}
