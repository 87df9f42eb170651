import { constantTimeEqual } from '../../shared/identity/secrets.js';
import { GatewayError } from '../../shared/errors.js';
import { BACKCHANNEL_LOGOUT_PATH, FAVICON_PATH } from '../../shared/http/gateway-paths.js';
import { redirect, sendHtml } from '../../shared/http/http-response.js';
import { forbiddenPage } from '../console/error-pages.js';
import type { Session } from '../../shared/types.js';
import { ASSET_PREFIX } from '../console/console-assets.js';
import { isLiveToken, type PresentedToken } from '../credentials/bearer-auth.js';
import { scopeIncludes } from '../credentials/token-scope.js';
import type { Handler, RequestContext } from './request-context.js';

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** The methods a `read` token may use (design.md §4.8); HEAD is answered by the GET routes. */
const READ_METHODS = new Set(['GET', 'HEAD']);

/**
 * `WWW-Authenticate` challenges of the admin API (RFC 6750 §3): without credentials, the scheme
 * alone (§3: no error code when none were sent); for a bearer credential that is no live token,
 * `invalid_token`; for a `read` token asked to write, `insufficient_scope` (§3.1).
 */
const CHALLENGE = {
  none: 'Bearer',
  invalidToken: 'Bearer error="invalid_token"',
  insufficientScope: 'Bearer error="insufficient_scope", scope="write"',
};

/**
 * Requests the admin plane does not count against RATE_LIMIT_GENERAL: the console's static assets
 * and the gateway's icon (public and static, like health endpoints; browsers fetch the icon beside
 * every page), and every request of a signed-in administrator, whose console refreshes itself
 * every few seconds (design.md §4.6) and would use up the default 100 requests per 15 minutes within
 * minutes, or of a live admin API token (design.md §4.8: an administrator's automation, counted
 * per token by RATE_LIMIT_TOKEN instead, in admin-plane.ts). Anonymous
 * and non-admin requests, and those with a bearer credential that is no live token, stay limited,
 * and sign-in attempts stay under RATE_LIMIT_AUTH. The identity provider's back-channel logouts
 * are exempt too: a provider offboarding many users at once must not be refused (each is a signed
 * token checked before anything is looked up).
 */
export function exemptFromGeneralLimit(path: string, session: Session | null, apiToken: PresentedToken): boolean {
  return session?.user.isAdmin === true || isLiveToken(apiToken) || path.startsWith(ASSET_PREFIX) || path === FAVICON_PATH || path === BACKCHANNEL_LOGOUT_PATH;
}

/** Requires a session (interface.md §5.3): else 401 `Not authenticated`. */
export function requireSession(handler: Handler): Handler {
  return (ctx) => {
    if (!ctx.session) throw new GatewayError('NOT_AUTHENTICATED');
    return handler(ctx);
  };
}

/**
 * Requires an administrator on the admin API (interface.md §5.3, design.md §4.8): the API token of
 * `Authorization: Bearer` when the request carries one, else an admin session.
 * - A token is all the request acts with, whatever session cookie comes along (the handler sees
 *   no session): 401 `Not authenticated` with `WWW-Authenticate: Bearer error="invalid_token"`
 *   unless it is live; a `read` token on anything but GET or HEAD, 403 `Insufficient scope` with
 *   `WWW-Authenticate: Bearer error="insufficient_scope", scope="write"`.
 * - A session: 401 `Not authenticated` (with `WWW-Authenticate: Bearer`) without one, 403
 *   `Admin access required` without admin rights.
 */
export function requireAdmin(handler: Handler): Handler {
  const withSession = requireAdminRights(handler, { 'www-authenticate': CHALLENGE.none });
  return (ctx) => {
    const token = ctx.apiToken;
    if (token === null) return withSession(ctx);
    if (token === 'invalid') throw invalidToken();
    if (!scopeIncludes(token.scope, 'write') && !READ_METHODS.has(ctx.req.method ?? '')) {
      throw new GatewayError('INSUFFICIENT_SCOPE', { headers: { 'www-authenticate': CHALLENGE.insufficientScope } });
    }
    return handler({ ...ctx, session: null, sessionId: null });
  };
}

/**
 * Requires an admin session and no API token, for the endpoints that manage tokens (design.md
 * §4.8): a token cannot mint or revoke tokens, so a leaked one cannot outlive its revocation. A
 * live token: 403 `Tokens cannot manage tokens`; another bearer credential: 401 as
 * {@link requireAdmin}'s; no session: 401, without admin rights: 403 `Admin access required`.
 */
export function requireAdminSession(handler: Handler): Handler {
  const withSession = requireAdminRights(handler);
  return (ctx) => {
    if (ctx.apiToken === 'invalid') throw invalidToken();
    if (ctx.apiToken !== null) throw new GatewayError('TOKENS_CANNOT_MANAGE_TOKENS');
    return withSession(ctx);
  };
}

/** An admin session: 401 `Not authenticated` (with `headers`) without a session, 403 `Admin access required` without admin rights. */
function requireAdminRights(handler: Handler, headers?: Record<string, string>): Handler {
  return (ctx) => {
    if (!ctx.session) throw new GatewayError('NOT_AUTHENTICATED', { headers });
    if (!ctx.session.user.isAdmin) throw new GatewayError('ADMIN_REQUIRED');
    return handler(ctx);
  };
}

const invalidToken = () => new GatewayError('NOT_AUTHENTICATED', { headers: { 'www-authenticate': CHALLENGE.invalidToken } });

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
 * design.md §4.3): else 403 `Invalid CSRF token`. Compared in constant time. Not of a request that
 * acts with an API token alone (requireAdmin set its session aside): a bearer token is no
 * ambient credential a browser adds by itself, so another site cannot make a request carry it.
 */
export function requireCsrf(handler: Handler): Handler {
  return (ctx) => {
    const actsWithToken = ctx.session === null && isLiveToken(ctx.apiToken);
    if (MUTATING.has(ctx.req.method ?? '') && !actsWithToken && !csrfTokenMatches(ctx)) throw new GatewayError('INVALID_CSRF');
    return handler(ctx);
  };
}

function csrfTokenMatches(ctx: RequestContext): boolean {
  const sent = ctx.req.headers['x-csrf-token'];
  const expected = ctx.session?.csrfToken;
  if (typeof sent !== 'string' || !expected) return false;
  return constantTimeEqual(sent, expected);
}
