import type { ServerResponse } from 'node:http';
import { serviceEntryPath } from '../../shared/services/service-entry.js';
import type { Route } from './route-table.js';
import { withRequestId } from '../../shared/http/request-id.js';

/**
 * A request for exactly a service's prefix, such as `GET /spa` (design.md §5 "bare prefix"), that
 * gets a redirect to `/spa/` instead of the target's base path, as nginx does for a prefix
 * location. Forwarded, `/spa` would give the app's index page a URL whose relative links
 * (`app.js`) resolve outside the service (`/app.js`, RFC 3986 §5.2.3).
 *
 * Only `GET` and `HEAD`, which a browser navigates with and which are safe to repeat; other
 * methods are forwarded to the base path, as their body and meaning belong to the app. A
 * WebSocket handshake is forwarded too: clients do not follow its redirects (RFC 6455 §4.1).
 * "Exactly" is judged on the routing key, so `/SPA`, `/%73pa` and `/spa;x=1` count and `/spa/`
 * does not; the service at `/` has no bare form.
 */
export function isBarePrefix(method: string | undefined, key: string, route: Route, websocket: boolean): boolean {
  return route.depth > 0 && key === route.key && (method === 'GET' || method === 'HEAD') && !websocket;
}

/**
 * Answers a bare-prefix request with `308 Permanent Redirect` (RFC 9110 §15.4.9: the method is
 * kept) to the registered path plus `/` and the request's `query` (`''` or `?…`), whatever the
 * spelling the client used. The registered path starts with `/` and a segment, so the `Location`
 * is never scheme-relative. `Cache-Control: no-store`: the registry can change, and a browser
 * must not remember the redirect after the service moves or goes.
 */
export function redirectToEntry(res: ServerResponse, route: Route, query: string): void {
  res.writeHead(
    308,
    withRequestId(res, {
      location: serviceEntryPath(route.service.path) + query,
      'content-length': 0,
      'cache-control': 'no-store',
    }),
  );
  res.end();
}
