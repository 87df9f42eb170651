import { GatewayError } from '../../shared/errors.js';
import { sendJson } from '../../shared/http/http-response.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Session } from '../../shared/types.js';
import { actorOf } from '../actor.js';
import { isLiveToken } from '../credentials/bearer-auth.js';
import { scopeIncludes } from '../credentials/token-scope.js';
import { readPage } from '../http/pagination.js';
import { rejectWrongParameters, type QueryFields } from '../http/query-errors.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { SessionRevocation } from '../sessions/session-revocation.js';
import { sessionView } from '../sessions/session-view.js';

/** Longest `user` a sessions query takes: a subject is at most 255 ASCII characters (OIDC Core 1.0 §2), an email 320. */
const MAX_USER_LENGTH = 320;

/**
 * The admin API's session endpoints; the guards (admin, CSRF on changes, token scopes) are wired in
 * route-table.ts, except the `sessions` scope that ending an administrator's session takes from a
 * token, which depends on whose sessions they are (see {@link refuseTokenEndingAdminSessions}).
 */
export interface SessionHandlers {
  list: Handler;
  revoke: Handler;
  revokeUser: Handler;
}

export function createSessionHandlers(deps: { sessions: SessionStore; revocation: SessionRevocation }): SessionHandlers {
  const { sessions, revocation } = deps;
  return {
    /**
     * GET /api/sessions?user=<sub or email>&limit&offset → 200 `{ sessions, total }`, live sessions
     * newest first (all users' without `user`); 400 naming each bad parameter.
     */
    list: async (ctx) => {
      const fields: QueryFields = {};
      const page = readPage(ctx.url.searchParams, fields);
      const user = ctx.url.searchParams.get('user') ?? undefined;
      if (user !== undefined && (user.length === 0 || user.length > MAX_USER_LENGTH)) fields.user = `must be a subject or an email of 1 to ${MAX_USER_LENGTH} characters`;
      rejectWrongParameters(fields);
      const { sessions: found, total } = await sessions.list({ ...page, ...(user === undefined ? {} : { user }) });
      sendJson(ctx.res, 200, { sessions: found.map(sessionView), total });
    },

    /**
     * DELETE /api/sessions/:id → 204: the session ends on every proxy within a second; 404 `Session
     * not found`; 403 for a token without the `sessions` scope when it is an administrator's.
     */
    revoke: async (ctx) => {
      const session = await sessions.byHandle(ctx.params.id!);
      if (session !== null) refuseTokenEndingAdminSessions(ctx, [session]);
      if (session === null || (await revocation.end([session], actorOf(ctx), 'admin-revoked')) === 0) throw new GatewayError('SESSION_NOT_FOUND');
      ctx.res.writeHead(204, { 'cache-control': 'no-store' }).end();
    },

    /**
     * DELETE /api/users/:sub/sessions → 200 `{ revoked: n }`: every session of that subject ends (n
     * may be 0); 403 for a token without the `sessions` scope when one of them is an
     * administrator's, and then none ends.
     */
    revokeUser: async (ctx) => {
      const sub = decodedParameter(ctx.params.sub!);
      const found = await sessions.find({ sub });
      refuseTokenEndingAdminSessions(ctx, found);
      const revoked = await revocation.end(found, actorOf(ctx), 'admin-revoked');
      sendJson(ctx.res, 200, { revoked });
    },
  };
}

/** RFC 6750 §3.1: the token lacks a scope, named so a client can tell which to ask for. */
const SESSIONS_SCOPE_CHALLENGE = 'Bearer error="insufficient_scope", scope="sessions"';

/**
 * Refuses a request that acts with an API token lacking the `sessions` scope when `ending` holds
 * an administrator's session (design.md §4.8: only a session revokes a token, so a leaked write
 * token looping over the admins' sessions would sign out each admin who comes to revoke it).
 * Sessions pass. Checked before anything ends, so a refused call ends nothing.
 * @throws {GatewayError} SESSIONS_SCOPE_REQUIRED (403) with `WWW-Authenticate: Bearer
 *   error="insufficient_scope", scope="sessions"`.
 */
function refuseTokenEndingAdminSessions(ctx: RequestContext, ending: readonly Session[]): void {
  const token = ctx.apiToken;
  if (ctx.session !== null || !isLiveToken(token) || scopeIncludes(token.scope, 'sessions')) return;
  if (ending.some((session) => session.user.isAdmin)) {
    throw new GatewayError('SESSIONS_SCOPE_REQUIRED', { headers: { 'www-authenticate': SESSIONS_SCOPE_CHALLENGE } });
  }
}

/**
 * A path parameter percent-decoded (a subject may hold `|`, `@` or `/`: `auth0|123`).
 * @throws {GatewayError} BAD_REQUEST for a malformed escape.
 */
function decodedParameter(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new GatewayError('BAD_REQUEST', { message: 'sub is not a well-formed percent-encoded subject', fields: { sub: 'must be percent-encoded UTF-8' } });
  }
}
