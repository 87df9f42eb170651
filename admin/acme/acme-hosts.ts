import { isIP } from 'node:net';
import { isWildcardHost } from '../../shared/services/host-names.js';
import type { Service } from '../../shared/types.js';

/**
 * The hosts the admin process keeps certificates for by ACME (design.md §4.15): PUBLIC_URL's,
 * ADMIN_URL's (when https) and every service's, enabled or not, lowercased. Left out: wildcards
 * (they need DNS-01, which the gateway cannot answer), IP addresses (RFC 8738 certificates, which
 * public CAs do not issue) and names of one label (`localhost`: no CA can validate them). A
 * `*.localhost` name stays: browsers and test resolvers send it to loopback.
 */
export function acmeHosts(publicUrl: URL, adminUrl: URL | undefined, services: readonly Service[]): Set<string> {
  const names = [publicUrl.hostname, ...(adminUrl?.protocol === 'https:' ? [adminUrl.hostname] : []), ...services.flatMap((service) => service.hosts ?? [])];
  return new Set(names.map((name) => name.toLowerCase()).filter(orderable));
}

/** Whether a CA can validate `host` by HTTP-01 or TLS-ALPN-01. */
export function orderable(host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host;
  return !isWildcardHost(host) && isIP(bare) === 0 && host.includes('.');
}
