import type { ServerResponse } from 'node:http';
import { GatewayError } from '../../shared/errors.js';
import { acceptsHtml, sendError, sendHtml } from '../../shared/http/http-response.js';
import { signInRequiredPage } from '../../shared/pages/sign-in-required-page.js';

/**
 * The 401 for a protected service without a session (design.md §3.5): `{"error":"Not authenticated"}`,
 * or, when the request accepts `text/html`, the gateway's sign-in page (still 401) linking to the
 * login that returns to `target`, the raw request-target (path and query) the caller asked for.
 * `challenge`: the `WWW-Authenticate` field when bearer tokens are accepted (RFC 6750 §3).
 * `loginPath`: the page's sign-in link before the encoded target (signInRequiredPage's default: `/auth/login?returnTo=`).
 */
export function sendNotAuthenticated(
  res: ServerResponse,
  target: string,
  accept: string | undefined,
  challenge: Record<string, string> | undefined,
  loginPath?: string,
): void {
  if (acceptsHtml(accept)) sendHtml(res, 401, signInRequiredPage(target, loginPath), challenge);
  else sendError(res, new GatewayError('NOT_AUTHENTICATED', { headers: challenge }));
}
