import type { IncomingMessage } from 'node:http';
import type { TrustedProxies } from './trusted-proxies.js';

/**
 * Resolves a request's client address (design.md §5): the socket's peer, unless that peer is a proxy
 * listed in TRUST_PROXY, in which case `X-Forwarded-For` is walked right to left (proxy-addr) to
 * the first untrusted hop. IPv4-mapped IPv6 addresses are shown as IPv4.
 */
export function clientIpResolver(trusted: TrustedProxies): (req: IncomingMessage) => string {
  return (req) => unmapIpv4(trusted.clientAddress(req));
}

/** The rate-limit key for an address: IPv4 as is, IPv6 by its /64 (one subscriber's prefix). */
export function rateLimitKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const groups = expandIpv6(ip);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** `::ffff:192.0.2.1` (an IPv4-mapped IPv6 address, RFC 4291 §2.5.5.2) as `192.0.2.1`; others unchanged. */
export function unmapIpv4(ip: string): string {
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

/** The eight 16-bit groups of an IPv6 address, zero-filled (`::` expanded). */
function expandIpv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros: string[] = Array(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}
