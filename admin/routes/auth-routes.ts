import { randomBytes } from 'node:crypto';
import { rateLimitKey } from '../../shared/client-ip.js';
import type { Config } from '../../shared/config.js';
import { readCookie } from '../../shared/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import { redirect, sendHtml, sendJson } from '../../shared/http-response.js';
import type { Logger } from '../../shared/logger.js';
import { rateLimitHeaders, type RateLimiter } from '../../shared/rate-limiter.js';
import type { SessionStore } from '../../shared/session-store.js';
import type { AuditLog } from '../audit-log.js';
import { readFormBody } from '../form-body.js';
import { GatewayCookies } from '../gateway-cookies.js';
import type { LoginTransaction, LoginTransactions } from '../oidc/login-transactions.js';
import { isPendingState, pendingStates, withoutState, withState } from '../oidc/pending-logins.js';
import type { RelyingParty } from '../oidc/relying-party.js';
import { safeReturnTo } from '../oidc/return-to.js';
import { sessionUserFromClaims } from '../oidc/session-user.js';
import { loginFailedPage } from '../pages/login-page.js';
import type { Handler, RequestContext } from '../request-context.js';

export interface AuthDeps {
  config: Config;
  sessions: SessionStore;
  audit: AuditLog;
  relyingParty: RelyingParty;
  transactions: LoginTransactions;
  authLimiter: RateLimiter;
  logger: Logger;
}

/** A callback that cannot become a session; `reason` is safe to show and to audit. */
class LoginFailure extends Error {}

/**
 * The authentication endpoints (spec §4.1, §5; DESIGN §4): login, callback (POST for form_post,
 * GET for query), logout, profile, and the CSRF token.
 */
export function createAuthHandlers(deps: AuthDeps) {
  const { config, sessions, audit, relyingParty, transactions } = deps;
  const cookies = new GatewayCookies(config);

  /** Counts an authentication attempt (DESIGN §5); throws 429 past RATE_LIMIT_AUTH. */
  async function countAttempt(ctx: RequestContext): Promise<void> {
    const decision = await deps.authLimiter.consume(rateLimitKey(ctx.clientIp));
    if (!decision.allowed) throw new GatewayError('RATE_LIMITED', { headers: rateLimitHeaders(decision) });
  }

  const login: Handler = async (ctx) => {
    await countAttempt(ctx);
    const started = await relyingParty.startLogin();
    const { state, nonce, codeVerifier } = started;
    transactions.save({ state, nonce, codeVerifier, returnTo: safeReturnTo(ctx.url.searchParams.get('returnTo')) });
    const pending = withState(pendingLogins(ctx), state);
    redirect(ctx.res, started.authorizationUrl.href, { 'set-cookie': cookies.transaction(pending) });
  };

  /** The `state`s of the logins this browser has in flight, from its transaction cookie. */
  function pendingLogins(ctx: RequestContext): string[] {
    return pendingStates(readCookie(ctx.req.headers.cookie, cookies.names.transaction));
  }

  /** The transaction cookie once `params`' state is done with (the browser's other logins stay). */
  function transactionCookieAfter(ctx: RequestContext, params: URLSearchParams): string {
    return cookies.transaction(withoutState(pendingLogins(ctx), params.get('state') ?? ''));
  }

  /** Checks the callback's state against the browser's transaction cookie, then takes the transaction. */
  function takeTransaction(ctx: RequestContext, params: URLSearchParams): LoginTransaction {
    const state = params.get('state');
    if (!state || !isPendingState(pendingLogins(ctx), state)) {
      throw new LoginFailure('The sign-in response does not belong to this browser (state mismatch).');
    }
    const transaction = transactions.take(state);
    if (!transaction) throw new LoginFailure('This sign-in has expired or was already used.');
    return transaction;
  }

  const callback: Handler = async (ctx) => {
    const method = ctx.req.method === 'POST' ? 'POST' : 'GET';
    const params = method === 'POST' ? await readFormBody(ctx.req) : ctx.url.searchParams;
    let transaction: LoginTransaction;
    let completed;
    try {
      transaction = takeTransaction(ctx, params);
      completed = await relyingParty.completeLogin(params, method, transaction);
    } catch (error) {
      await failLogin(ctx, error, transactionCookieAfter(ctx, params));
      return;
    }
    const user = sessionUserFromClaims(completed.claims, config);
    if (ctx.sessionId) await sessions.destroy(ctx.sessionId);
    const now = Date.now();
    const sessionId = await sessions.create({
      user,
      csrfToken: randomBytes(32).toString('base64url'),
      idToken: completed.idToken,
      createdAt: now,
      expiresAt: now + config.sessionTtlMs,
    });
    audit.record({ action: 'USER_LOGIN', userId: user.sub, serviceId: null, ipAddress: ctx.clientIp, details: { email: user.email, isAdmin: user.isAdmin } });
    redirect(ctx.res, transaction.returnTo, {
      'set-cookie': [cookies.session(sessionId, config.sessionTtlMs), transactionCookieAfter(ctx, params)],
    });
  };

  /**
   * Audits a failed callback, counts it as an attempt, and answers 400 with the reason (or 429);
   * `transactionCookie` forgets the failed login's state.
   */
  async function failLogin(ctx: RequestContext, error: unknown, transactionCookie: string): Promise<void> {
    if (error instanceof GatewayError && error.code === 'IDENTITY_PROVIDER_UNAVAILABLE') throw error;
    const reason = describeFailure(error);
    deps.logger.warn({ reason, ip: ctx.clientIp }, 'login failed');
    audit.record({ action: 'LOGIN_FAILED', userId: null, serviceId: null, ipAddress: ctx.clientIp, details: { reason } });
    await countAttempt(ctx);
    sendHtml(ctx.res, 400, loginFailedPage(reason), { 'set-cookie': transactionCookie });
  }

  const logout: Handler = async (ctx) => {
    let location = '/';
    if (ctx.session && ctx.sessionId) {
      await sessions.destroy(ctx.sessionId);
      audit.record({ action: 'USER_LOGOUT', userId: ctx.session.user.sub, serviceId: null, ipAddress: ctx.clientIp, details: {} });
      location = (await relyingParty.endSessionUrl(ctx.session.idToken)) ?? '/';
    }
    redirect(ctx.res, location, { 'set-cookie': cookies.clearSession() });
  };

  const profile: Handler = (ctx) => sendJson(ctx.res, 200, { user: ctx.session!.user });
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
  const code = (specific as { error?: unknown; code?: unknown }).error ?? (specific as { code?: unknown }).code;
  const text = `${typeof code === 'string' ? `${code}: ` : ''}${specific.message}`;
  return `The identity provider's response was rejected (${text.slice(0, 300)}).`;
}
