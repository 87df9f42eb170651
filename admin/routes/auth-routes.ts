import { rateLimitKey } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { readCookie } from '../../shared/http/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import { errorCode } from '../../shared/error-code.js';
import { redirect, sendHtml, sendJson } from '../../shared/http/http-response.js';
import type { Logger } from '../../shared/logger.js';
import { refuseOverLimit, type RateLimiter } from '../../shared/backends/rate-limiter.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { AuditLog } from '../audit-log.js';
import { constantTimeEqual, newBrowserKey, newCsrfToken, newSessionHandle } from '../../shared/identity/secrets.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Session, SessionUser } from '../../shared/types.js';
import { browserKeyFrom, browserKeyHash } from '../oidc/browser-binding.js';
import type { LoginTransaction, LoginTransactions } from '../oidc/login-transactions.js';
import type { CompletedLogin, RelyingParty } from '../oidc/relying-party.js';
import type { GrantRelease } from '../sessions/grant-release.js';
import { safeReturnTo } from '../oidc/return-to.js';
import { userFromClaims } from '../../shared/identity/identity-claims.js';
import { loginFailedPage } from '../../shared/pages/login-page.js';
import { logoutConfirmPage } from '../../shared/pages/logout-page.js';
import { isFormBody, readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';

export interface AuthDeps {
  config: Config;
  sessions: SessionStore;
  audit: AuditLog;
  relyingParty: RelyingParty;
  transactions: LoginTransactions;
  authLimiter: RateLimiter;
  /** Seals refresh tokens (SESSION_ENCRYPTION_KEY); undefined: none are kept. */
  cipher: TokenCipher | undefined;
  /** Gives a signed-out session's refresh token back to the provider. */
  grants: GrantRelease;
  logger: Logger;
}

/** The part of a `User-Agent` a session keeps for the sessions list, in characters. */
const MAX_USER_AGENT_LENGTH = 300;

/** A callback that cannot become a session; `reason` is safe to show and to audit. */
class LoginFailure extends Error {}

/**
 * The authentication endpoints (interface.md §4.1, §5; design.md §4): login, callback (POST for form_post,
 * GET for query), logout, profile, and the CSRF token.
 */
export function createAuthHandlers(deps: AuthDeps) {
  const { config, sessions, audit, relyingParty, transactions } = deps;

  /** Counts an authentication attempt (design.md §5); throws 429 past RATE_LIMIT_AUTH. */
  async function countAttempt(ctx: RequestContext): Promise<void> {
    refuseOverLimit(await deps.authLimiter.consume(rateLimitKey(ctx.clientIp)));
  }

  /** The key in this browser's transaction cookie on the request's origin, if it holds one. */
  function browserKeyOf(ctx: RequestContext): string | undefined {
    return browserKeyFrom(readCookie(ctx.req.headers.cookie, ctx.origin.cookies.names.transaction));
  }

  const login: Handler = async (ctx) => {
    await countAttempt(ctx);
    const redirectUri = ctx.origin.callbackUrl;
    const started = await relyingParty.startLogin(redirectUri);
    const { state, nonce, codeVerifier } = started;
    const browserKey = browserKeyOf(ctx) ?? newBrowserKey();
    const returnTo = safeReturnTo(ctx.url.searchParams.get('returnTo'));
    transactions.save({ state, nonce, codeVerifier, returnTo, redirectUri, browserKeyHash: browserKeyHash(browserKey) });
    redirect(ctx.res, started.authorizationUrl.href, { 'set-cookie': ctx.origin.cookies.transaction(browserKey) });
  };

  /** Takes the callback's transaction, if this browser started it (browser-binding.ts). */
  function takeTransaction(ctx: RequestContext, params: URLSearchParams): LoginTransaction {
    const state = params.get('state');
    const taken = state ? transactions.take(state, browserKeyOf(ctx)) : 'unknown';
    if (taken === 'other-browser') throw new LoginFailure('The sign-in response does not belong to this browser (state mismatch).');
    if (taken === 'unknown') throw new LoginFailure('This sign-in has expired or was already used.');
    return taken;
  }

  const callback: Handler = async (ctx) => {
    const method = ctx.req.method === 'POST' ? 'POST' : 'GET';
    const params = method === 'POST' ? await readFormBody(ctx) : ctx.url.searchParams;
    let transaction: LoginTransaction;
    let completed;
    try {
      transaction = takeTransaction(ctx, params);
      completed = await relyingParty.completeLogin(params, method, transaction);
    } catch (error) {
      await failLogin(ctx, error);
      return;
    }
    const user = userFromClaims(completed.claims, config);
    if (ctx.sessionId) await sessions.destroy(ctx.sessionId);
    const sessionId = await sessions.create(newSession(ctx, user, completed));
    audit.record({ action: 'USER_LOGIN', userId: user.sub, serviceId: null, ipAddress: ctx.clientIp, details: { email: user.email, isAdmin: user.isAdmin } });
    redirect(ctx.res, transaction.returnTo, { 'set-cookie': ctx.origin.cookies.session(sessionId, config.sessionTtlMs) });
  };

  /**
   * The session a completed sign-in makes: a new handle, the provider's `sid` (back-channel logout)
   * and, when the provider issued one and SESSION_ENCRYPTION_KEY is set, the refresh token sealed
   * to that handle (session-revalidator.ts re-checks the session with it).
   */
  function newSession(ctx: RequestContext, user: SessionUser, completed: CompletedLogin): Session {
    const now = Date.now();
    const handle = newSessionHandle();
    const sid = completed.claims.sid;
    const scope = ctx.origin.sessionScope;
    return {
      handle,
      user,
      csrfToken: newCsrfToken(),
      idToken: completed.idToken,
      createdAt: now,
      expiresAt: now + config.sessionTtlMs,
      lastSeenAt: now,
      checkedAt: now,
      ipAddress: ctx.clientIp,
      userAgent: (ctx.req.headers['user-agent'] ?? '').slice(0, MAX_USER_AGENT_LENGTH),
      ...(typeof sid === 'string' && sid !== '' ? { sid } : {}),
      ...(completed.refreshToken !== undefined && deps.cipher !== undefined ? { refreshToken: deps.cipher.encrypt(completed.refreshToken, handle) } : {}),
      ...(scope ? { scope } : {}),
    };
  }

  /** Audits a failed callback, counts it as an attempt, and answers 400 with the reason (or 429). */
  async function failLogin(ctx: RequestContext, error: unknown): Promise<void> {
    if (error instanceof GatewayError && error.code === 'IDENTITY_PROVIDER_UNAVAILABLE') throw error;
    const reason = describeFailure(error);
    deps.logger.warn({ reason, ip: ctx.clientIp }, 'login failed');
    audit.record({ action: 'LOGIN_FAILED', userId: null, serviceId: null, ipAddress: ctx.clientIp, details: { reason } });
    await countAttempt(ctx);
    sendHtml(ctx.res, 400, loginFailedPage(reason));
  }

  /**
   * `POST /auth/logout` with the session's CSRF token (`X-CSRF-Token` or the form's `_csrf`), or
   * `GET /auth/logout` from the gateway's own pages, a typed address or a non-browser client
   * (design.md §5 "logout methods"); a GET from another site gets a page whose form confirms it.
   * Without a session: 302 to `/` (idempotent, no token needed).
   * @throws {GatewayError} INVALID_CSRF (403) for a POST with a session and no valid token.
   */
  const logout: Handler = async (ctx) => {
    const { session, sessionId, origin } = ctx;
    if (session && sessionId) {
      if (ctx.req.method === 'POST') {
        if (!constantTimeEqual((await sentCsrfToken(ctx)) ?? '', session.csrfToken)) throw new GatewayError('INVALID_CSRF');
      } else if (!mayLogOutByGet(ctx.req.headers['sec-fetch-site'])) {
        return sendHtml(ctx.res, 200, logoutConfirmPage(session.csrfToken));
      }
    }
    let location = '/';
    if (session && sessionId) {
      await sessions.destroy(sessionId);
      deps.grants.release([session]);
      audit.record({ action: 'USER_LOGOUT', userId: session.user.sub, serviceId: null, ipAddress: ctx.clientIp, details: {} });
      location = (await relyingParty.endSessionUrl(session.idToken, `${origin.url.origin}/`)) ?? '/';
    }
    redirect(ctx.res, location, { 'set-cookie': origin.cookies.clearSession() });
  };

  // The session user of interface.md §2.4, exactly: groups stay server-side (design.md §4.7).
  const profile: Handler = (ctx) => {
    const { sub, name, email, isAdmin } = ctx.session!.user;
    sendJson(ctx.res, 200, { user: { sub, name, email, isAdmin } });
  };
  const csrfToken: Handler = (ctx) => sendJson(ctx.res, 200, { csrfToken: ctx.session!.csrfToken });

  return { login, callback, logout, profile, csrfToken };
}

/**
 * A reason for the audit log and the page: ours, or the most specific error openid-client reports
 * (it wraps oauth4webapi's check, e.g. `unexpected JWT "aud" (audience) claim value`, as `cause`).
 * These messages name the failed check, never a token.
 */
function describeFailure(error: unknown): string {
  if (error instanceof LoginFailure) return error.message;
  let specific: unknown = error;
  while (specific instanceof Error && specific.cause instanceof Error) specific = specific.cause;
  if (!(specific instanceof Error)) return "The identity provider's response was rejected.";
  const oauthError = (specific as { error?: unknown }).error; // an OAuth error code (`invalid_grant`…), as openid-client reports the provider's
  const code = typeof oauthError === 'string' ? oauthError : errorCode(specific);
  const text = `${code !== undefined ? `${code}: ` : ''}${specific.message}`;
  return `The identity provider's response was rejected (${text.slice(0, 300)}).`;
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
