import type { ServerResponse } from 'node:http';
import type { SessionStore } from '../../shared/backends/session-store.js';
import { GatewayError } from '../../shared/errors.js';
import { acceptsHtml, redirect, sendHtml } from '../../shared/http/http-response.js';
import { ownSession, ownSessionsPage } from '../../shared/pages/own-sessions-page.js';
import { constantTimeEqual } from '../../shared/identity/secrets.js';
import type { Session } from '../../shared/types.js';
import { actorOf } from '../actor.js';
import { CONSOLE_SESSIONS_PAGE_SIZE, MAX_SESSION_SEARCH_LENGTH, sessionsPage } from '../console/sessions-page.js';
import { parsePagination } from '../http/pagination.js';
import { isFormBody, readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { SessionRevocation } from '../sessions/session-revocation.js';
import { sessionView } from '../sessions/session-view.js';
import type { ConsoleView } from '../console/console-layout.js';
import type { ConsolePageRender, Rendered } from './console-routes.js';

/** Where `/auth/sessions` sends a browser that is not signed in: the login page, coming back there. */
const SIGN_IN_FIRST = `/auth/login-page?returnTo=${encodeURIComponent('/auth/sessions')}`;

/**
 * The sessions' pages (the guards are wired in route-table.ts):
 * - `console`: the console's Sessions page, `GET /dashboard/sessions` (admins; its changes go
 *   through the sessions API);
 * - `own`, `revoke`, `revokeOthers`: `/auth/sessions`, where every signed-in user sees and ends
 *   their own sessions of the origin they are on.
 */
export interface SessionPageHandlers {
  console: ConsolePageRender;
  own: Handler;
  revoke: Handler;
  revokeOthers: Handler;
}

/** What the sessions' pages work with. */
interface SessionPageDeps {
  sessions: SessionStore;
  revocation: SessionRevocation;
}

export function createSessionPageHandlers(deps: SessionPageDeps): SessionPageHandlers {
  return {
    console: (ctx, view) => consoleSessions(deps.sessions, ctx, view),
    own: (ctx) => own(deps.sessions, ctx),
    revoke: (ctx) => revoke(deps, ctx),
    revokeOthers: (ctx) => revokeOthers(deps, ctx),
  };
}

/**
 * `GET /dashboard/sessions[?user&limit&offset]`: a page of every user's live sessions (or those of
 * one `user`, by email or subject), each marked with its origin and whether it is this browser's.
 * @throws {GatewayError} BAD_REQUEST (400) for a `user` over MAX_SESSION_SEARCH_LENGTH or bad paging.
 */
async function consoleSessions(sessions: SessionStore, ctx: RequestContext, view: ConsoleView): Promise<Rendered> {
  const { limit, offset } = parsePagination(ctx.url.searchParams, CONSOLE_SESSIONS_PAGE_SIZE);
  const user = ctx.url.searchParams.get('user')?.trim() || undefined;
  if (user !== undefined && user.length > MAX_SESSION_SEARCH_LENGTH) {
    throw new GatewayError('BAD_REQUEST', { message: `user must be an email or a subject of at most ${MAX_SESSION_SEARCH_LENGTH} characters`, fields: { user: 'too long' } });
  }
  const found = await sessions.list({ limit, offset, ...(user === undefined ? {} : { user }) });
  const current = ctx.session?.handle;
  const rows = found.sessions.map((session) => ({ ...sessionView(session), adminOrigin: session.scope === 'admin', current: session.handle === current }));
  return { html: sessionsPage(view, { rows, total: found.total, limit, offset, url: ctx.url, user }) };
}

/**
 * `GET /auth/sessions` → 200, the page; without a session, a browser (`Accept: text/html`) is
 * sent to the login page (302), anything else gets 401 `Not authenticated`.
 */
async function own(sessions: SessionStore, ctx: RequestContext): Promise<void> {
  const current = ctx.session;
  if (!current) {
    if (acceptsHtml(ctx.req.headers.accept)) return redirect(ctx.res, SIGN_IN_FIRST);
    throw new GatewayError('NOT_AUTHENTICATED');
  }
  const list = (await ownSessions(sessions, current)).map((session) => ownSession(session, current.handle));
  // `?ended=n`: what the form just did, said once on the page it lands on.
  const ended = /^\d{1,6}$/.test(ctx.url.searchParams.get('ended') ?? '') ? { ended: Number(ctx.url.searchParams.get('ended')) } : {};
  sendHtml(ctx.res, 200, ownSessionsPage({ user: current.user, csrfToken: current.csrfToken, sessions: list, now: Date.now(), ...ended }));
}

/**
 * `POST /auth/sessions/revoke` (form: `session`, the handle, and `_csrf`) → 303 to
 * `/auth/sessions`: another session of the same user and origin ends (audited,
 * `signed-out-elsewhere`). 403 without the session's CSRF token; 404 `Session not found` for a
 * handle that is not one of theirs (another user's changes nothing); 400 for the current one
 * (`/auth/logout` ends that).
 */
async function revoke({ sessions, revocation }: SessionPageDeps, ctx: RequestContext): Promise<void> {
  const current = ctx.session!;
  const form = await checkedForm(ctx);
  const handle = form.get('session') ?? '';
  if (handle === current.handle) {
    throw new GatewayError('BAD_REQUEST', { message: 'This is the session of this browser: sign out to end it', fields: { session: 'is the current session' } });
  }
  const target = handle === '' ? null : await sessions.byHandle(handle);
  if (target === null || target.user.sub !== current.user.sub || !sameScope(target, current)) throw new GatewayError('SESSION_NOT_FOUND');
  const ended = await revocation.end([target], actorOf(ctx), 'signed-out-elsewhere');
  seeOther(ctx.res, `/auth/sessions?ended=${ended}`);
}

/** `POST /auth/sessions/revoke-others` (`_csrf`) → 303 to `/auth/sessions`: every other session of the user on this origin ends. */
async function revokeOthers({ sessions, revocation }: SessionPageDeps, ctx: RequestContext): Promise<void> {
  const current = ctx.session!;
  await checkedForm(ctx);
  const others = (await ownSessions(sessions, current)).filter((session) => session.handle !== current.handle);
  const ended = others.length === 0 ? 0 : await revocation.end(others, actorOf(ctx), 'signed-out-elsewhere');
  seeOther(ctx.res, `/auth/sessions?ended=${ended}`);
}

/** The user's live sessions of the current one's scope (ADMIN_URL's and the public origin's are apart), newest first. */
async function ownSessions(sessions: SessionStore, current: Session): Promise<Session[]> {
  const found = await sessions.find({ sub: current.user.sub });
  return found.filter((session) => sameScope(session, current)).sort((a, b) => b.createdAt - a.createdAt);
}

/** Both sessions are valid on the same origin (design.md §4.5): ADMIN_URL's (`scope: 'admin'`) or the public one. */
function sameScope(a: Session, b: Session): boolean {
  return (a.scope ?? 'public') === (b.scope ?? 'public');
}

/**
 * The form of a POST from `/auth/sessions`, once its CSRF token (`X-CSRF-Token`, else the form's
 * `_csrf`) is the session's, compared in constant time.
 * @throws {GatewayError} INVALID_CSRF (403) otherwise.
 */
async function checkedForm(ctx: RequestContext): Promise<URLSearchParams> {
  const form = isFormBody(ctx.req) ? await readFormBody(ctx) : new URLSearchParams();
  const header = ctx.req.headers['x-csrf-token'];
  const sent = typeof header === 'string' ? header : (form.get('_csrf') ?? '');
  if (!constantTimeEqual(sent, ctx.session!.csrfToken)) throw new GatewayError('INVALID_CSRF');
  return form;
}

/** 303 See Other: the answer to a form's POST, which the browser follows with a GET. */
function seeOther(res: ServerResponse, location: string): void {
  res.writeHead(303, { location, 'content-length': 0, 'cache-control': 'no-store' });
  res.end();
}
