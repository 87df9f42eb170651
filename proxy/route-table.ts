import type { Service } from '../shared/types.js';
import { compileAccessPolicy, type CompiledAccessPolicy } from '../shared/access-policy.js';
import { routingKey } from './routing-key.js';

/**
 * A registered service, prepared once per registry snapshot so the request path does no parsing:
 * the public prefix and the target's origin and base path are plain strings, the access policy
 * a set lookup.
 */
export interface Route {
  readonly service: Service;
  /** The service path as a prefix: `''` for `/`, otherwise `/seg(/seg)*` (no trailing slash), as registered. */
  readonly prefix: string;
  /** {@link prefix} as a routing key (routing-key.ts): for a valid service path, its lowercase form. */
  readonly key: string;
  /** How many segments the prefix has: 0 for the root, 2 for `/a/b`. */
  readonly depth: number;
  /** The target's origin (`http://host:port`), as WHATWG URL serialises it; the pool key. */
  readonly origin: string;
  /** The target's base path without a trailing slash: `''` when the target has none. */
  readonly basePath: string;
  /** The service's access policy (design.md §4.7); undefined when any signed-in caller may pass. */
  readonly access: CompiledAccessPolicy | undefined;
}

/** Called for a service whose `targetUrl` cannot be parsed; the service is left out of the table. */
export type InvalidTargetListener = (service: Service, error: unknown) => void;

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
  readonly #root: Route | undefined;
  /** Segment count of the deepest registered prefix (`/a/b` has 2). */
  readonly #maxDepth: number;

  /**
   * Builds the table from a registry snapshot (enabled and disabled services alike). The registry
   * refuses paths that differ only in case, but a legacy database may hold some: of two services
   * with one key, the table keeps {@link moreProtective} of them.
   */
  constructor(services: readonly Service[], onInvalid: InvalidTargetListener = () => {}) {
    let root: Route | undefined;
    let maxDepth = 0;
    for (const service of services) {
      const route = toRoute(service, onInvalid);
      if (!route) continue;
      if (route.key === '') {
        root = route;
        continue;
      }
      const other = this.#byKey.get(route.key);
      this.#byKey.set(route.key, other ? moreProtective(route, other) : route);
      maxDepth = Math.max(maxDepth, route.depth);
    }
    this.#root = root;
    this.#maxDepth = maxDepth;
  }

  /** True when a service (enabled or not) is registered at `/`. */
  get hasRoot(): boolean {
    return this.#root !== undefined;
  }

  /** Every origin a route points at: the upstream pools worth keeping. */
  origins(): Set<string> {
    const origins = new Set<string>();
    for (const route of this.#byKey.values()) origins.add(route.origin);
    if (this.#root) origins.add(this.#root.origin);
    return origins;
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

function toRoute(service: Service, onInvalid: InvalidTargetListener): Route | undefined {
  let target: URL;
  try {
    target = new URL(service.targetUrl);
  } catch (error) {
    onInvalid(service, error);
    return undefined;
  }
  const prefix = withoutTrailingSlash(service.path);
  const key = prefix === '' ? '' : routingKey(prefix);
  return {
    service,
    prefix,
    key,
    depth: segmentCount(key),
    origin: target.origin,
    basePath: withoutTrailingSlash(target.pathname),
    access: compileAccessPolicy(service.access),
  };
}

function withoutTrailingSlash(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === SLASH) end--;
  return path.slice(0, end);
}
