import type { ServerResponse } from 'node:http';
import { GatewayError } from '../shared/errors.js';
import { sendError, sendHtml } from '../shared/http-response.js';

/** A browser's navigation asks for HTML (RFC 9110 §12.5.1); compiled once. */
const ACCEPTS_HTML = /text\/html/i;

/**
 * The 401 for a protected service without a session (DESIGN §3.5): `{"error":"Not authenticated"}`,
 * or, when the request accepts `text/html`, a page (still 401) linking to the login that returns
 * to `target`, the raw request-target (path and query) the caller asked for.
 */
export function sendNotAuthenticated(res: ServerResponse, target: string, accept: string | undefined): void {
  if (accept !== undefined && ACCEPTS_HTML.test(accept)) sendHtml(res, 401, loginPage(target));
  else sendError(res, new GatewayError('NOT_AUTHENTICATED'));
}

/** The sign-in page; `target` is percent-encoded into the link, so it needs no further escaping. */
function loginPage(target: string): string {
  const login = `/auth/login?returnTo=${encodeURIComponent(target)}`;
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign in required</title></head>
<body>
<h1>Sign in required</h1>
<p>You need to sign in to use this service.</p>
<p><a href="${login}">Sign in</a></p>
</body>
</html>
`;
}
