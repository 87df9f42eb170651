import type { SessionStore } from '../../shared/backends/session-store.js';
import { GatewayError } from '../../shared/errors.js';
import { redirect, sendHtml } from '../../shared/http/http-response.js';
import { constantTimeEqual } from '../../shared/identity/secrets.js';
import { logoutConfirmPage } from '../../shared/pages/logout-page.js';
import type { AuditLog } from '../audit-log.js';
import type { RelyingParty } from '../oidc/relying-party.js';
import type { GrantRelease } from '../sessions/grant-release.js';
import { isFormBody, readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';

/** What logout works with (part of auth-routes.ts's `AuthDeps`). */
export interface LogoutDeps {
  sessions: SessionStore;
  audit: AuditLog;
  relyingParty: RelyingParty;
  /** Gives a signed-out session's refresh token back to the provider. */
  grants: GrantRelease;
}

/**
 * `POST /auth/logout` with the session's CSRF token (`X-CSRF-Token` or the form's `_csrf`), or
 * `GET /auth/logout` from the gateway's own pages, a typed address or a non-browser client
 * (design.md §5 "logout methods"); a GET from another site gets a page whose form confirms it.
 * Without a session: 302 to `/` (idempotent, no token needed). On a service host (`/.gatehouse/logout`,
 * design.md §4.16) the same, with its host session's CSRF token; the user's session ends on every host.
 * @throws {GatewayError} INVALID_CSRF (403) for a POST with a session and no valid token.
 */
export function createLogoutHandler(deps: LogoutDeps): Handler {
  const { sessions, audit, relyingParty } = deps;
  return async (ctx) => {
    const { session, sessionId, origin } = ctx;
    if (session && sessionId) {
      if (ctx.req.method === 'POST') {
        if (!constantTimeEqual((await sentCsrfToken(ctx)) ?? '', session.csrfToken)) throw new GatewayError('INVALID_CSRF');
      } else if (!mayLogOutByGet(ctx.req.headers['sec-fetch-site'])) {
        return sendHtml(ctx.res, 200, logoutConfirmPage(session.csrfToken, origin.logoutPath));
      }
    }
    let location = '/';
    if (session && sessionId) {
      // By handle: on a service host the cookie names a link, and the session it names ends (design.md §4.16).
      await sessions.revoke([session.handle]);
      deps.grants.release([session], ctx.logger);
      audit.record({ action: 'USER_LOGOUT', userId: session.user.sub, serviceId: null, ipAddress: ctx.clientIp, details: {} });
      // Without the provider's logout: this origin's `/`; a service host's goes to the sign-in origin's.
      location = (await relyingParty.endSessionUrl(session.idToken, origin.afterLogoutUrl)) ?? (origin.kind === 'host' ? origin.afterLogoutUrl : '/');
    }
    redirect(ctx.res, location, { 'set-cookie': origin.cookies.clearSession() });
  };
}

/**
 * `Sec-Fetch-Site` values (Fetch Metadata) under which a GET may sign out: absent (a non-browser
 * client, as the interface's `GET /auth/logout` has it), `same-origin` (the gateway's own pages)
 * and `none` (typed or bookmarked). `same-site` and `cross-site` are other sites' links.
 */
function mayLogOutByGet(fetchSite: string | string[] | undefined): boolean {
  return fetchSite === undefined || fetchSite === 'same-origin' || fetchSite === 'none';
}

/** The CSRF token a logout POST carries: `X-CSRF-Token`, else the form's `_csrf`. */
async function sentCsrfToken(ctx: RequestContext): Promise<string | undefined> {
  const header = ctx.req.headers['x-csrf-token'];
  if (typeof header === 'string') return header;
  return isFormBody(ctx.req) ? ((await readFormBody(ctx)).get('_csrf') ?? undefined) : undefined;
}
