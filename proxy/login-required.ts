import type { ServerResponse } from 'node:http';
import { GatewayError } from '../shared/errors.js';
import { acceptsHtml, sendError, sendHtml } from '../shared/http-response.js';
import { html } from '../shared/html.js';
import { page } from '../shared/pages/layout.js';

/**
 * The 401 for a protected service without a session (design.md §3.5): `{"error":"Not authenticated"}`,
 * or, when the request accepts `text/html`, a page in the gateway's look (still 401) linking to the
 * login that returns to `target`, the raw request-target (path and query) the caller asked for.
 */
export function sendNotAuthenticated(res: ServerResponse, target: string, accept: string | undefined): void {
  if (acceptsHtml(accept)) sendHtml(res, 401, loginRequiredPage(target));
  else sendError(res, new GatewayError('NOT_AUTHENTICATED'));
}

/** The sign-in page; `target` is percent-encoded into the link's `returnTo`. */
function loginRequiredPage(target: string): string {
  const login = `/auth/login?returnTo=${encodeURIComponent(target)}`;
  return page(
    'Sign in required',
    html`<h1>Sign in required</h1>
<p>You need to sign in to use this service.</p>
<p><a class="button" id="login" href="${login}">Sign in</a></p>`,
  );
}
