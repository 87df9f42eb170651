import { GATEWAY_PREFIXES, isGatewayPath, isReservedPath, RESERVED_PREFIX } from '../../shared/http/gateway-paths.js';
import { routingKey } from '../../shared/routing/routing-key.js';
import { hostMatches } from '../../shared/services/host-names.js';
import type { Service } from '../../shared/types.js';

/**
 * Whether a request path reaches a service at all, before its rules (design.md §3.2): the
 * gateway's own paths, the service's hosts and prefix, and a service with a longer prefix that
 * would take the path instead. Paths are compared on their routing keys (shared/routing/), as the
 * data plane's route table compares them, so every spelling of a path is routed alike.
 */

/** Where a path goes instead of the service, said in one sentence. */
export interface Elsewhere {
  reason: string;
  /** The service the gateway routes the path to instead, when it is one. */
  routedTo?: { id: string; name: string; path: string };
}

/**
 * The service's prefix as a routing key: `''` for `/`, else the key of the path without a
 * trailing slash, as the data plane's route table keys it (proxy/routing/route-table.ts).
 */
export function prefixKeyOf(service: Pick<Service, 'path'>): string {
  const prefix = service.path.replace(/\/+$/, '');
  return prefix === '' ? '' : routingKey(prefix);
}

/**
 * Undefined when a request for `key` (a routing key) on `host` (normal form; undefined: any host
 * the service is reached on) is routed to `service`, else where it goes and why. `services` is
 * the whole registry (disabled services take their paths too).
 */
export function elsewhere(service: Service, services: readonly Service[], key: string, host: string | undefined): Elsewhere | undefined {
  if (isReservedPath(key)) return { reason: `The gateway keeps ${RESERVED_PREFIX} for itself on every host: nothing under it reaches a service.` };
  const hosts = service.hosts ?? [];
  if (host !== undefined && hosts.length > 0 && !hosts.some((name) => hostMatches(name, host))) {
    return { reason: `The service is not reached on ${host}: only on ${hosts.join(', ')}.` };
  }
  if (hosts.length === 0) {
    if (host !== undefined && services.some((other) => namesHost(other, host))) {
      return { reason: `Other services name the host ${host}: there only they are routed, never a service without hosts.` };
    }
    if (isGatewayPath(key)) return { reason: `The gateway answers ${GATEWAY_PREFIXES.join(', ')} and below itself: no service is reached there.` };
  }
  const own = prefixKeyOf(service);
  if (!isUnder(key, own)) return { reason: `The path is not under the service's path ${service.path}, on whole segments.` };
  const longer = longestOther(service, services, key, host, own.length);
  if (longer === undefined) return undefined;
  const { id, name, path } = longer;
  return { reason: `The gateway routes it to the service ${name} at ${path}, whose path is longer (the longest prefix wins).`, routedTo: { id, name, path } };
}

/** True when the routing key `key` is `prefix` or below it on whole segments (`''` is the root). */
function isUnder(key: string, prefix: string): boolean {
  return prefix === '' || (key.startsWith(prefix) && (key.length === prefix.length || key.charCodeAt(prefix.length) === 0x2f));
}

function namesHost(service: Service, host: string): boolean {
  return (service.hosts ?? []).some((name) => hostMatches(name, host));
}

/**
 * The other service with the longest prefix (longer than `ownLength`) that `key` is under and
 * that shares the request's host table: naming `host`, or, without one, sharing a host with
 * `service` (both host-less included).
 */
function longestOther(service: Service, services: readonly Service[], key: string, host: string | undefined, ownLength: number): Service | undefined {
  const ownHosts = service.hosts ?? [];
  const sameTable = (other: Service): boolean => {
    const hosts = other.hosts ?? [];
    if (host !== undefined && ownHosts.length > 0) return namesHost(other, host);
    return ownHosts.length === 0 ? hosts.length === 0 : hosts.some((name) => ownHosts.includes(name));
  };
  let best: Service | undefined;
  let bestLength = ownLength;
  for (const other of services) {
    if (other.id === service.id || !sameTable(other)) continue;
    const prefix = prefixKeyOf(other);
    if (prefix.length > bestLength && isUnder(key, prefix)) {
      best = other;
      bestLength = prefix.length;
    }
  }
  return best;
}
