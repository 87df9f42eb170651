import type { ServerResponse } from 'node:http';
import { readCookie } from '../../shared/http/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import { SERVICE_HOST_PATHS } from '../../shared/http/gateway-paths.js';
import { acceptsHtml, redirect, sendError, sendHtml } from '../../shared/http/http-response.js';
import { constantTimeEqual, handoffBinding, newCsrfToken } from '../../shared/identity/secrets.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import { loginFailedPage } from '../../shared/pages/login-page.js';
import type { HostHandoff, HostHandoffs } from '../oidc/host-handoffs.js';
import type { Handler, RequestContext } from '../http/request-context.js';

/** What a service host's sign-in works with. */
export interface HostSessionDeps {
  sessions: SessionStore;
  handoffs: HostHandoffs;
}

const CODE_REFUSED = 'This sign-in link has expired or was already used. Sign in again.';

/**
 * `GET /.gatehouse/callback?code=…` on a service host (design.md §4.16): redeems the code the
 * sign-in origin handed the browser and makes the host session. The code must be unexpired and
 * unused, name this host, and come with the `gw_handoff` cookie whose hash it keeps (so a code
 * made for one browser cannot sign another in, as a login CSRF would); the session must still
 * live. Then 302 to the code's return path with the host session's cookie (as long as the session
 * has left) and the hand-off cookie cleared. Otherwise 400, no cookie set; the code is consumed
 * either way.
 */
export function createHostCallbackHandler(deps: HostSessionDeps): Handler {
  return async (ctx) => {
    const { origin, res } = ctx;
    const handoff = deps.handoffs.take(ctx.url.searchParams.get('code'));
    const key = readCookie(ctx.req.headers.cookie, origin.cookies.names.handoff);
    if (handoff === null || handoff.host !== origin.serviceHost || key === undefined || !constantTimeEqual(handoffBinding(key), handoff.binding)) {
      return refuse(ctx);
    }
    const session = await deps.sessions.byHandle(handoff.handle);
    const linkId = session && (await deps.sessions.link(handoff.handle, handoff.host, newCsrfToken()));
    if (!session || !linkId) return refuse(ctx);
    redirect(res, handoff.returnTo, { 'set-cookie': [origin.cookies.session(linkId, session.expiresAt - Date.now()), origin.cookies.clearHandoff()] });
  };
}

/**
 * Hands the session `handle` to the service host of `handoff`: a code for it, and 302 to that
 * host's callback (on PUBLIC_URL's scheme and port), with `headers` (a new session's cookie).
 */
export function sendToServiceHost(handoffs: HostHandoffs, res: ServerResponse, publicUrl: URL, handoff: HostHandoff, headers: Record<string, string> = {}): void {
  const code = handoffs.issue(handoff);
  const callback = new URL(publicUrl.origin);
  callback.hostname = handoff.host;
  callback.pathname = SERVICE_HOST_PATHS.callback;
  callback.searchParams.set('code', code);
  redirect(res, callback.href, headers);
}

function refuse(ctx: RequestContext): void {
  if (acceptsHtml(ctx.req.headers.accept)) sendHtml(ctx.res, 400, loginFailedPage(CODE_REFUSED, '/'));
  else sendError(ctx.res, new GatewayError('BAD_REQUEST'));
}
