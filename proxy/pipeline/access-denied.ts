import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import { acceptsHtml, sendError, sendHtml } from '../../shared/http/http-response.js';
import { accessDeniedPage } from '../../shared/pages/access-denied-page.js';
import type { Service, SessionUser } from '../../shared/types.js';

/**
 * The 403 for a signed-in caller the service's access policy refuses (design.md §4.7), and for
 * any caller of a path a `deny` rule closes (design.md §4.18): `{"error":"Access denied"}`, or,
 * when the request accepts `text/html`, the gateway's page naming the service and the account
 * (when signed in), still 403.
 */
export function sendAccessDenied(res: ServerResponse, service: Service, user: SessionUser | undefined, accept: string | undefined): void {
  if (acceptsHtml(accept)) sendHtml(res, 403, accessDeniedPage(service, user));
  else sendError(res, new GatewayError('ACCESS_DENIED'));
}
