import type { Service } from '../../shared/types.js';
import { compileAccessPolicy, type CompiledAccessPolicy } from '../../shared/services/access-policy.js';
import { createLogger } from '../../shared/logger.js';
import { compileServiceRules, type CompiledRules } from '../../shared/services/service-rules.js';
import { poolSettingsOf } from '../../shared/services/target-pool-settings.js';
import { fnv1a } from '../pool/balancing/client-ip-hash.js';
import { routingKey } from '../../shared/routing/routing-key.js';
import { stickyTargetId } from '../pool/sticky-target.js';
import { TargetHealthBook } from '../pool/target-health-book.js';
import type { RouteTarget } from '../pool/route-target.js';
import { TargetPool } from '../pool/target-pool.js';

/**
 * A registered service, prepared once per registry snapshot so the request path does no parsing:
 * the public prefix and each target's origin and base path are plain strings, the access policy
 * a set lookup, the rules compiled patterns.
 */
export interface Route {
  readonly service: Service;
  /** The service path as a prefix: `''` for `/`, otherwise `/seg(/seg)*` (no trailing slash), as registered. */
  readonly prefix: string;
  /** {@link prefix} as a routing key (routing-key.ts): for a valid service path, its lowercase form. */
  readonly key: string;
  /** How many segments the prefix has: 0 for the root, 2 for `/a/b`. */
  readonly depth: number;
  /** The service's targets and how a request picks one. */
  readonly pool: TargetPool;
  /** The service's access policy (design.md §4.7); undefined when any signed-in caller may pass. */
  readonly access: CompiledAccessPolicy | undefined;
  /** The service's rules and CORS preflight setting (design.md §4.18); undefined when it has neither. */
  readonly rules: CompiledRules | undefined;
}

/** Called for a service one of whose target urls cannot be parsed; the service is left out of the table. */
export type InvalidTargetListener = (service: Service, error: unknown) => void;

/** What a table's targets are made with: the process's health book, and the sticky cookie's key. */
export interface TargetContext {
  readonly book: TargetHealthBook;
  /** The HMAC key of sticky target ids (sticky-target.ts). */
  readonly stickyKey: Buffer;
}

const SLASH = 0x2f;

/**
 * Longest-prefix match on whole path segments (design.md §3.2): `/app` matches `/app`, `/app/`,
 * `/app/x`, never `/apple`; a service at `/` matches whatever nothing else does. Matching compares
 * routing keys (routing-key.ts, design.md §5): lowercased prefixes against the request path's key, so
 * `/APP/x`, `/%61pp/x` and `/app%2Fx` all match `/app`.
 *
 * Prefixes live in a Map; a lookup probes the key's own prefixes from the longest down
 * (`/a/b/c`, `/a/b`, `/a`), never deeper than the deepest registered prefix, so its cost grows with
 * the path's segment count and not with the number of services.
 */
export class RouteTable {
  static readonly EMPTY = new RouteTable([]);

  readonly #byKey = new Map<string, Route>();
  #root: Route | undefined;
  /** Segment count of the deepest registered prefix (`/a/b` has 2). */
  #maxDepth = 0;

  /**
   * Builds the table from a registry snapshot (enabled and disabled services alike). The registry
   * refuses paths that differ only in case, but a legacy database may hold some: of two services
   * with one key, the table keeps {@link moreProtective} of them.
   */
  constructor(services: readonly Service[], onInvalid: InvalidTargetListener = () => {}, context: TargetContext = standaloneContext()) {
    for (const service of services) {
      const route = toRoute(service, onInvalid, context);
      if (route) this.#add(route);
    }
  }

  /**
   * A table over routes already built (host-routes.ts: a service named on several hosts is one
   * {@link Route}, one pool, in each host's table), kept as the constructor keeps services.
   */
  static of(routes: Iterable<Route>): RouteTable {
    const table = new RouteTable([]);
    for (const route of routes) table.#add(route);
    return table;
  }

  #add(route: Route): void {
    if (route.key === '') {
      this.#root = this.#root ? moreProtective(route, this.#root) : route;
      return;
    }
    const other = this.#byKey.get(route.key);
    this.#byKey.set(route.key, other ? moreProtective(route, other) : route);
    this.#maxDepth = Math.max(this.#maxDepth, route.depth);
  }

  /** True when a service (enabled or not) is registered at `/`. */
  get hasRoot(): boolean {
    return this.#root !== undefined;
  }

  /** The route for a request path's routing key (`routingKey(path)`), or undefined. */
  lookup(key: string): Route | undefined {
    let end = probeStart(key, this.#maxDepth);
    while (end > 0) {
      const route = this.#byKey.get(end === key.length ? key : key.slice(0, end));
      if (route) return route;
      end = key.lastIndexOf('/', end - 1);
    }
    return this.#root;
  }
}

/**
 * Of two routes with one key, the one that requires sign-in; between equals, the one whose path
 * sorts first (then id), so the choice does not depend on the snapshot's order.
 */
function moreProtective(a: Route, b: Route): Route {
  if (a.service.requireAuth !== b.service.requireAuth) return a.service.requireAuth ? a : b;
  const order = compare(a.service.path, b.service.path) || compare(a.service.id, b.service.id);
  return order <= 0 ? a : b;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Where probing starts: the whole key, or, when it is deeper than any registered prefix, the
 * `/` that ends its first `maxDepth` segments.
 */
function probeStart(key: string, maxDepth: number): number {
  let slashes = 0;
  for (let i = 0; i < key.length; i++) {
    if (key.charCodeAt(i) === SLASH && ++slashes > maxDepth) return i;
  }
  return key.length;
}

function segmentCount(prefix: string): number {
  let count = 0;
  for (let i = 0; i < prefix.length; i++) if (prefix.charCodeAt(i) === SLASH) count++;
  return count;
}

/**
 * The route of one service, its targets parsed and its pool made, or undefined (after
 * `onInvalid`) when a target url cannot be parsed.
 */
export function toRoute(service: Service, onInvalid: InvalidTargetListener, context: TargetContext): Route | undefined {
  const settings = poolSettingsOf(service);
  const prefix = withoutTrailingSlash(service.path);
  let targets: RouteTarget[];
  try {
    targets = settings.targets.map(({ url, weight }) => {
      const parsed = new URL(url);
      return {
        prefix,
        origin: targetOrigin(parsed),
        basePath: withoutTrailingSlash(parsed.pathname),
        url,
        weight,
        health: context.book.healthOf(service.id, url, settings),
        stickyId: stickyTargetId(context.stickyKey, service.id, url),
        hashSeed: fnv1a(url),
      };
    });
  } catch (error) {
    onInvalid(service, error);
    return undefined;
  }
  const key = prefix === '' ? '' : routingKey(prefix);
  return {
    service,
    prefix,
    key,
    depth: segmentCount(key),
    pool: new TargetPool(targets, settings.loadBalancing, settings.retries),
    access: compileAccessPolicy(service.access),
    rules: compileServiceRules(service),
  };
}

/** For a table built on its own (tests, tools): a health book of its own, an empty sticky key. */
export function standaloneContext(): TargetContext {
  return { book: new TargetHealthBook(createLogger('silent', 'targets')), stickyKey: Buffer.alloc(0) };
}

function withoutTrailingSlash(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === SLASH) end--;
  return path.slice(0, end);
}

/**
 * A target url's origin, the connection pool's key: WHATWG URL's serialisation for `http:` and
 * `https:`; for `h2c:` (a non-special scheme, whose `origin` URL reads as `null`) the scheme and
 * host (http2-targets.ts dials it as `http:`).
 */
function targetOrigin(url: URL): string {
  return url.protocol === 'h2c:' ? `h2c://${url.host}` : url.origin;
}
