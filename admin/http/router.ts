import type { Handler } from './request-context.js';

/** Result of {@link Router.match}: a handler with its params and the route's pattern, or the methods the path allows. */
export type RouteMatch =
  | { handler: Handler; params: Record<string, string>; pattern: string }
  | { allow: string[] }
  | undefined;

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  handler: Handler;
}

/**
 * A small method + path router for the admin plane. Patterns are literal segments and `:name`
 * parameters (`/api/services/:id/logs`). A path that exists under other methods yields its
 * `Allow` list, for 405 (RFC 9110 §15.5.6).
 */
export class Router {
  readonly #routes: Route[] = [];

  add(method: string, pattern: string, handler: Handler): this {
    this.#routes.push({ method, pattern, segments: pattern.split('/'), handler });
    return this;
  }

  /** Every route's method and pattern, in the order added. */
  routes(): { method: string; pattern: string }[] {
    return this.#routes.map(({ method, pattern }) => ({ method, pattern }));
  }

  match(method: string, path: string): RouteMatch {
    const segments = path.split('/');
    const allow: string[] = [];
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, segments);
      if (!params) continue;
      if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { handler: route.handler, params, pattern: route.pattern };
      allow.push(route.method);
    }
    // Two patterns may match one path (`/api/services/export` and `/api/services/:id`): each method once.
    return allow.length > 0 ? { allow: [...new Set(allow)] } : undefined;
  }
}

function matchSegments(pattern: string[], actual: string[]): Record<string, string> | undefined {
  if (pattern.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    if (expected.startsWith(':')) {
      if (!actual[i]) return undefined;
      params[expected.slice(1)] = actual[i]!;
    } else if (expected !== actual[i]) {
      return undefined;
    }
  }
  return params;
}
