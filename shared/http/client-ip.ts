import type { IncomingMessage } from 'node:http';
import type { TrustedProxies } from './trusted-proxies.js';

/**
 * Resolves a request's client address (design.md §5 "client IP"): the socket's peer, unless that
 * peer is a proxy listed in TRUST_PROXY, in which case the hops it reports are walked right to left
 * to the first untrusted one ({@link TrustedProxies.clientAddress}). Always a bare IP address
 * (node:net `isIP`): a reported value that is none is never the client's. IPv4-mapped IPv6
 * addresses are shown as IPv4.
 */
export function clientIpResolver(trusted: TrustedProxies): (req: IncomingMessage) => string {
  return (req) => trusted.clientAddress(req);
}

/** The rate-limit key for an address: IPv4 as is, IPv6 by its /64 (one subscriber's prefix). */
export function rateLimitKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const groups = expandIpv6(ip);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, zero-filled (`::` expanded). */
function expandIpv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const zeros: string[] = Array(Math.max(0, 8 - left.length - right.length)).fill('0');
  return [...left, ...zeros, ...right].map((group) => group.toLowerCase().replace(/^0+(?=.)/, ''));
}
