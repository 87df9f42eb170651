import { constantTimeEqual } from '../shared/secrets.js';
import { GatewayError } from '../shared/errors.js';
import { FAVICON_PATH } from '../shared/gateway-paths.js';
import { redirect, sendHtml } from '../shared/http-response.js';
import { forbiddenPage } from './console/error-pages.js';
import type { Session } from '../shared/types.js';
import { ASSET_PREFIX } from './console/console-assets.js';
import type { Handler, RequestContext } from './request-context.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Requests the admin plane does not count against RATE_LIMIT_GENERAL: the console's static assets
 * and the gateway's icon (public and static, like health endpoints; browsers fetch the icon beside
 * every page), and every request of a signed-in administrator, whose console refreshes itself
 * every few seconds (design.md §4.6) and would use up the default 100 requests per 15 minutes within
 * minutes. Anonymous and non-admin requests stay limited, and sign-in attempts stay under
 * RATE_LIMIT_AUTH.
 */
export function exemptFromGeneralLimit(path: string, session: Session | null): boolean {
  return session?.user.isAdmin === true || path.startsWith(ASSET_PREFIX) || path === FAVICON_PATH;
}

/** Requires a session (interface.md §5.3): else 401 `Not authenticated`. */
export function requireSession(handler: Handler): Handler {
  return (ctx) => {
    if (!ctx.session) throw new GatewayError('NOT_AUTHENTICATED');
    return handler(ctx);
  };
}

/** Requires an admin session (interface.md §5.3): 401 without a session, 403 `Admin access required` without admin rights. */
export function requireAdmin(handler: Handler): Handler {
  return requireSession((ctx) => {
    if (!ctx.session!.user.isAdmin) throw new GatewayError('ADMIN_REQUIRED');
    return handler(ctx);
  });
}

/**
 * Requires an admin session for a console page (design.md §4.6): without a session, a 302 to the login
 * page that comes back here (`returnTo`); without admin rights, a 403 HTML page that says why.
 */
export function requireAdminPage(handler: Handler): Handler {
  return (ctx) => {
    if (!ctx.session) {
      const returnTo = ctx.url.pathname + ctx.url.search;
      return redirect(ctx.res, `/auth/login-page?returnTo=${encodeURIComponent(returnTo)}`);
    }
    if (!ctx.session.user.isAdmin) return sendHtml(ctx.res, 403, forbiddenPage(ctx.session.user, ctx.session.csrfToken));
    return handler(ctx);
  };
}

/**
 * Requires the session's CSRF token in `X-CSRF-Token` on POST/PUT/PATCH/DELETE (interface.md §5.6,
 * design.md §4): else 403 `Invalid CSRF token`. Compared in constant time.
 */
export function requireCsrf(handler: Handler): Handler {
  return (ctx) => {
    if (MUTATING.has(ctx.req.method ?? '') && !csrfTokenMatches(ctx)) throw new GatewayError('INVALID_CSRF');
    return handler(ctx);
  };
}

function csrfTokenMatches(ctx: RequestContext): boolean {
  const sent = ctx.req.headers['x-csrf-token'];
  const expected = ctx.session?.csrfToken;
  if (typeof sent !== 'string' || !expected) return false;
  return constantTimeEqual(sent, expected);
}
