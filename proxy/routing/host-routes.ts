import type { Service } from '../../shared/types.js';
import { isWildcardHost, WILDCARD_PREFIX } from '../../shared/services/host-names.js';
import type { TargetHealth } from '../pool/target-health.js';
import { hostField, requestHostName } from './request-host.js';
import { RouteTable, standaloneContext, toRoute, type InvalidTargetListener, type Route, type TargetContext } from './route-table.js';

/** A host that services name, as a request reached it. */
export interface HostSite {
  /** The request's host name as request-host.ts reads it (`a.apps.example.com` for a wildcard's). */
  readonly host: string;
  /** The routes of the services that name it. */
  readonly table: RouteTable;
}

/**
 * The route tables of one registry snapshot by request host (design.md §3.2 "routing by host"),
 * made once per snapshot: one {@link RouteTable} per host that a service names (its `hosts`), and
 * the host-less table of the services that name none.
 *
 * - A host named by any service is routed only among the services that name it, at their `path`
 *   within it, never to a host-less service by path.
 * - An exact name wins over a wildcard; `*.apps.example.com` matches one label more
 *   (`a.apps.example.com`), never `apps.example.com` nor `a.b.apps.example.com`.
 * - Every other host (and a request without one) is routed on the host-less table, as before hosts
 *   existed. While no service has hosts, {@link hasHosts} is false and a request needs no host at all.
 *
 * A service named on several hosts is one {@link Route} (one pool, one health record per target)
 * in each of their tables.
 */
/** One label of a host name as the registry allows them (shared/services/host-names.ts, RFC 1123 §2.1). */
const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export class HostRoutes {
  static readonly EMPTY = new HostRoutes([]);

  /** The table of every host no service names. */
  readonly hostless: RouteTable;
  /** False while no service has hosts: the request's host is then never read. */
  readonly hasHosts: boolean;
  /** By exact name (`app.example.com`). */
  readonly #exact: ReadonlyMap<string, RouteTable>;
  /** By the name a wildcard's one label is added to (`*.apps.example.com` under `apps.example.com`). */
  readonly #wildcard: ReadonlyMap<string, RouteTable>;
  readonly #routes: readonly Route[];

  /**
   * `services`: the registry snapshot, enabled and disabled alike, their `hosts` in the registry's
   * form (lower-case A-labels, no port, no trailing dot). `onInvalid` and `context` as for
   * {@link RouteTable}.
   */
  constructor(services: readonly Service[], onInvalid: InvalidTargetListener = () => {}, context: TargetContext = standaloneContext()) {
    const hostless: Route[] = [];
    const byHost = new Map<string, Route[]>();
    const routes: Route[] = [];
    for (const service of services) {
      const route = toRoute(service, onInvalid, context);
      if (route === undefined) continue;
      routes.push(route);
      const hosts = service.hosts ?? [];
      if (hosts.length === 0) hostless.push(route);
      for (const host of hosts) {
        const named = byHost.get(host);
        if (named === undefined) byHost.set(host, [route]);
        else named.push(route);
      }
    }
    const exact = new Map<string, RouteTable>();
    const wildcard = new Map<string, RouteTable>();
    for (const [host, named] of byHost) {
      if (isWildcardHost(host)) wildcard.set(host.slice(WILDCARD_PREFIX.length), RouteTable.of(named));
      else exact.set(host, RouteTable.of(named));
    }
    this.hostless = RouteTable.of(hostless);
    this.hasHosts = byHost.size > 0;
    this.#exact = exact;
    this.#wildcard = wildcard;
    this.#routes = routes;
  }

  /**
   * The table of the host a request names: `name` as request-host.ts `requestHostName` gives it
   * (lowercased, no port, no trailing dot). Undefined when no service names that host (the request
   * is then routed on {@link hostless}). Under a wildcard, the one label added must be a DNS label
   * (RFC 1123 §2.1), as the registry's names are, so `X-Forwarded-Host` never carries anything else.
   */
  tableFor(name: string): RouteTable | undefined {
    const exact = this.#exact.get(name);
    if (exact !== undefined) return exact;
    const dot = name.indexOf('.');
    const wildcard = dot > 0 ? this.#wildcard.get(name.slice(dot + 1)) : undefined;
    return wildcard !== undefined && DNS_LABEL.test(name.slice(0, dot)) ? wildcard : undefined;
  }

  /**
   * Where a request is routed by its `Host` (`raw`: `req.rawHeaders`): the host's name and table
   * when a service names that host, else undefined (the request goes to {@link hostless}). Only
   * worth asking while {@link hasHosts}.
   */
  siteOf(raw: readonly string[]): HostSite | undefined {
    const host = requestHostName(hostField(raw));
    const table = host === undefined ? undefined : this.tableFor(host);
    return table === undefined ? undefined : { host: host!, table };
  }

  /** Every route once, whichever tables hold it. */
  routes(): IterableIterator<Route> {
    return this.#routes.values();
  }

  /** Every origin a route's targets point at: the upstream pools worth keeping. */
  origins(): Set<string> {
    const origins = new Set<string>();
    for (const route of this.#routes) for (const target of route.pool.targets) origins.add(target.origin);
    return origins;
  }

  /** The health of every target: what the process's health book keeps. */
  targetHealth(): Set<TargetHealth> {
    const kept = new Set<TargetHealth>();
    for (const route of this.#routes) for (const target of route.pool.targets) kept.add(target.health);
    return kept;
  }
}
