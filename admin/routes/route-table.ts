import { BACKCHANNEL_LOGOUT_PATH, FAVICON_PATH, SERVICE_HOST_PATHS } from '../../shared/http/gateway-paths.js';
import { requireAdmin, requireAdminPage, requireAdminSession, requireCsrf, requireSession } from '../http/guards.js';
import type { Handler } from '../http/request-context.js';
import type { AssertionKeyHandlers } from './assertion-key-routes.js';
import type { CertificateHandlers } from '../acme/certificate-routes.js';
import type { ConsoleHandlers } from './console-routes.js';
import type { OpenApiHandlers } from './openapi-routes.js';
import type { ServiceHandlers } from './service-routes.js';
import type { SessionPageHandlers } from './session-page-routes.js';
import type { SessionHandlers } from './session-routes.js';
import type { TokenHandlers } from './token-routes.js';
import { Router } from '../http/router.js';
import type { ServedOrigin } from '../http/served-origin.js';

/** The handler groups the admin plane serves; each comes from its own file under routes/. */
export interface RouteHandlers {
  pages: { home: Handler; consoleHome: Handler; loginPage: Handler; favicon: Handler };
  auth: { login: Handler; callback: Handler; logout: Handler; profile: Handler; csrfToken: Handler };
  services: ServiceHandlers;
  dashboard: { stats: Handler; logs: Handler; traffic: Handler };
  console: ConsoleHandlers;
  assertionKeys: AssertionKeyHandlers;
  tokens: TokenHandlers;
  sessions: SessionHandlers;
  sessionPages: SessionPageHandlers;
  backchannelLogout: Handler;
  hostSessions: { callback: Handler };
  openapi: OpenApiHandlers;
  certificates: CertificateHandlers;
}

/**
 * Every gateway-owned endpoint an origin serves and its guards, in one table (interface.md §4.1–4.3,
 * design.md §4/§5). Sign-in is on every origin; the admin API and the console only where
 * `origin.servesConsole` (everywhere unless ADMIN_URL is set, then only there: design.md §4.5). `/` is
 * the home page, or the console on ADMIN_URL's origin; `/favicon.ico` the gateway's icon on both.
 * Admin mutations check the session, then admin rights, then the CSRF token, in that order. The
 * admin JSON API (`/api/…`, `/dashboard/stats`, `logs`, `traffic`) also takes an API token instead
 * of the session, which needs no CSRF token and whose scope is checked instead (design.md §4.8);
 * the token endpoints take only an admin session. The API's description (`/api/openapi.json`)
 * takes no credentials (design.md §4.10). `POST /api/services/apply` is a write, with
 * `dryRun=true` too (a `write` token; a session's CSRF token): design.md §4.9. The registry
 * document's routes come before `/api/services/:id`, which would take `export` for an id.
 * `/auth/sessions` (every origin) lists a user's own sessions of that origin; its forms POST with
 * the session's CSRF token (`_csrf`), checked by their handlers. Console
 * pages (design.md §4.6) send anonymous visitors to the login page and non-admins a 403 page, and
 * never take a token; their assets are public. Pages under `/dashboard` never take `/dashboard/stats`, `logs` or `traffic`, which
 * answer JSON.
 */
export function buildRouter(h: RouteHandlers, origin: ServedOrigin): Router {
  const router = new Router()
    .add('GET', '/', origin.kind === 'admin' ? h.pages.consoleHome : h.pages.home)
    .add('GET', FAVICON_PATH, h.pages.favicon)
    .add('GET', '/auth/login-page', h.pages.loginPage)
    .add('GET', '/auth/login', h.auth.login)
    .add('POST', '/auth/callback', h.auth.callback)
    .add('GET', '/auth/callback', h.auth.callback)
    .add('GET', '/auth/logout', h.auth.logout)
    .add('POST', '/auth/logout', h.auth.logout)
    .add('GET', '/auth/profile', requireSession(h.auth.profile))
    .add('GET', '/auth/csrf-token', requireSession(h.auth.csrfToken))
    // A user's own sessions of this origin; the page sends a browser without a session to the login page.
    .add('GET', '/auth/sessions', h.sessionPages.own)
    .add('POST', '/auth/sessions/revoke', requireSession(h.sessionPages.revoke))
    .add('POST', '/auth/sessions/revoke-others', requireSession(h.sessionPages.revokeOthers))
    // A server-to-server call from the identity provider: no session, no CSRF token (design.md §4.11).
    .add('POST', BACKCHANNEL_LOGOUT_PATH, h.backchannelLogout);
  return origin.servesConsole ? withConsole(router, h) : router;
}

/**
 * A service host's reserved paths (design.md §4.16), its only gateway endpoints: the hand-off's
 * callback, its own logout (the CSRF token of its host session) and that token.
 */
export function buildServiceHostRouter(h: RouteHandlers): Router {
  return new Router()
    .add('GET', SERVICE_HOST_PATHS.callback, h.hostSessions.callback)
    .add('GET', SERVICE_HOST_PATHS.logout, h.auth.logout)
    .add('POST', SERVICE_HOST_PATHS.logout, h.auth.logout)
    .add('GET', SERVICE_HOST_PATHS.csrfToken, requireSession(h.auth.csrfToken));
}

/** The admin API, the dashboard API and the console's pages and assets. */
function withConsole(router: Router, h: RouteHandlers): Router {
  const admin = requireAdmin;
  const adminWrite = (handler: Handler) => requireAdmin(requireCsrf(handler));
  const sessionAdmin = requireAdminSession;
  const sessionAdminWrite = (handler: Handler) => requireAdminSession(requireCsrf(handler));
  router
    .add('GET', '/api/openapi.json', h.openapi.document)
    .add('GET', '/api/services', admin(h.services.list))
    .add('POST', '/api/services', adminWrite(h.services.create))
    .add('GET', '/api/services/export', admin(h.services.export))
    .add('POST', '/api/services/apply', adminWrite(h.services.apply))
    .add('GET', '/api/services/:id', admin(h.services.get))
    .add('PUT', '/api/services/:id', adminWrite(h.services.update))
    .add('DELETE', '/api/services/:id', adminWrite(h.services.remove))
    .add('PATCH', '/api/services/:id/toggle', adminWrite(h.services.toggle))
    .add('GET', '/api/services/:id/logs', admin(h.services.logs))
    .add('GET', '/api/services/:id/health', admin(h.services.health))
    .add('POST', '/api/services/:id/explain', adminWrite(h.services.explain))
    .add('POST', '/api/assertion-keys/rotate', adminWrite(h.assertionKeys.rotate))
    .add('GET', '/api/sessions', admin(h.sessions.list))
    .add('DELETE', '/api/sessions/:id', adminWrite(h.sessions.revoke))
    .add('DELETE', '/api/users/:sub/sessions', adminWrite(h.sessions.revokeUser))
    .add('GET', '/api/certificates', admin(h.certificates.list))
    .add('GET', '/api/tokens', sessionAdmin(h.tokens.list))
    .add('POST', '/api/tokens', sessionAdminWrite(h.tokens.create))
    .add('DELETE', '/api/tokens/:id', sessionAdminWrite(h.tokens.revoke))
    .add('GET', '/dashboard/stats', admin(h.dashboard.stats))
    .add('GET', '/dashboard/logs', admin(h.dashboard.logs))
    .add('GET', '/dashboard/traffic', admin(h.dashboard.traffic))
    .add('GET', '/dashboard/', h.console.slash)
    .add('GET', '/dashboard/assets/:file', h.console.asset);
  // The console's pages, all behind the page guard; `new` before `:id`, which would take it.
  const pages: Record<string, Handler> = {
    '/dashboard': h.console.overview,
    '/dashboard/audit': h.console.audit,
    '/dashboard/sessions': h.console.page(h.sessionPages.console),
    '/dashboard/tokens': h.console.tokens,
    '/dashboard/certificates': h.console.page(h.certificates.console),
    '/dashboard/services/new': h.console.newService,
    '/dashboard/services/:id': h.console.service,
    '/dashboard/services/:id/edit': h.console.editService,
  };
  for (const [path, page] of Object.entries(pages)) router.add('GET', path, requireAdminPage(page));
  return router;
}
