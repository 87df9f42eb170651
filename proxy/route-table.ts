import type { Service } from '../shared/types.js';

/**
 * A registered service, prepared once per registry snapshot so the request path does no parsing:
 * the public prefix and the target's origin and base path are plain strings.
 */
export interface Route {
  readonly service: Service;
  /** The service path as a prefix: `''` for `/`, otherwise `/seg(/seg)*` (no trailing slash). */
  readonly prefix: string;
  /** The target's origin (`http://host:port`), as WHATWG URL serialises it; the pool key. */
  readonly origin: string;
  /** The target's base path without a trailing slash: `''` when the target has none. */
  readonly basePath: string;
}

/** Called for a service whose `targetUrl` cannot be parsed; the service is left out of the table. */
export type InvalidTargetListener = (service: Service, error: unknown) => void;

const SLASH = 0x2f;

/**
 * Longest-prefix match on whole path segments (DESIGN §3.2): `/app` matches `/app`, `/app/`,
 * `/app/x`, never `/apple`; a service at `/` matches whatever nothing else does. Matching is
 * case-sensitive and works on the raw path, so `%2F` is not a separator.
 *
 * Prefixes live in a Map; a lookup probes the path's own prefixes from the longest down
 * (`/a/b/c`, `/a/b`, `/a`), never deeper than the deepest registered prefix, so its cost grows with
 * the path's segment count and not with the number of services.
 */
export class RouteTable {
  static readonly EMPTY = new RouteTable([]);

  readonly #byPrefix = new Map<string, Route>();
  readonly #root: Route | undefined;
  /** Segment count of the deepest registered prefix (`/a/b` has 2). */
  readonly #maxDepth: number;

  /** Builds the table from a registry snapshot (enabled and disabled services alike). */
  constructor(services: readonly Service[], onInvalid: InvalidTargetListener = () => {}) {
    let root: Route | undefined;
    let maxDepth = 0;
    for (const service of services) {
      const route = toRoute(service, onInvalid);
      if (!route) continue;
      if (route.prefix === '') {
        root = route;
        continue;
      }
      this.#byPrefix.set(route.prefix, route);
      maxDepth = Math.max(maxDepth, segmentCount(route.prefix));
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
    for (const route of this.#byPrefix.values()) origins.add(route.origin);
    if (this.#root) origins.add(this.#root.origin);
    return origins;
  }

  /** The route for a raw request path (no query, starts with `/`), or undefined. */
  lookup(path: string): Route | undefined {
    let end = probeStart(path, this.#maxDepth);
    while (end > 0) {
      const route = this.#byPrefix.get(end === path.length ? path : path.slice(0, end));
      if (route) return route;
      end = path.lastIndexOf('/', end - 1);
    }
    return this.#root;
  }
}

/**
 * Where probing starts: the whole path, or, when it is deeper than any registered prefix, the
 * `/` that ends its first `maxDepth` segments.
 */
function probeStart(path: string, maxDepth: number): number {
  let slashes = 0;
  for (let i = 0; i < path.length; i++) {
    if (path.charCodeAt(i) === SLASH && ++slashes > maxDepth) return i;
  }
  return path.length;
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
  return {
    service,
    prefix: withoutTrailingSlash(service.path),
    origin: target.origin,
    basePath: withoutTrailingSlash(target.pathname),
  };
}

function withoutTrailingSlash(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === SLASH) end--;
  return path.slice(0, end);
}
