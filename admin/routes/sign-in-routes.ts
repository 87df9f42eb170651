import { rateLimitKey } from '../../shared/http/client-ip.js';
import type { Config } from '../../shared/config/config.js';
import { readCookie } from '../../shared/http/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import { errorCode } from '../../shared/error-code.js';
import { redirect, sendHtml } from '../../shared/http/http-response.js';
import type { Logger } from '../../shared/logger.js';
import { refuseOverLimit, type RateLimiter } from '../../shared/backends/rate-limiter.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { AuditLog } from '../audit-log.js';
import { isWellFormedSecret, newBrowserKey, newCsrfToken, newSessionHandle } from '../../shared/identity/secrets.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Session, SessionUser } from '../../shared/types.js';
import { browserKeyFrom, browserKeyHash } from '../oidc/browser-binding.js';
import { RefreshTokenNotice } from '../sessions/refresh-token-notice.js';
import type { LoginTransaction, LoginTransactions } from '../oidc/login-transactions.js';
import type { CompletedLogin, RelyingParty } from '../oidc/relying-party.js';
import { safeReturnTo } from '../../shared/http/return-to.js';
import { readReturnAddress, type ReturnAddressRules } from '../oidc/return-address.js';
import type { HostHandoffs } from '../oidc/host-handoffs.js';
import { sendToServiceHost } from './host-session-routes.js';
import { userFromClaims } from '../../shared/identity/identity-claims.js';
import { loginFailedPage } from '../../shared/pages/login-page.js';
import { stepUpRefusedPage } from '../../shared/pages/step-up-pages.js';
import { readStepUpQuery } from '../../shared/identity/step-up.js';
import { stepUpShortfall } from '../oidc/step-up-check.js';
import { stepUpInPlace } from '../sessions/step-up-session.js';
import { serviceHostOrigin } from '../../shared/services/host-names.js';
import { readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';

/** What sign-in works with (part of auth-routes.ts's `AuthDeps`). */
export interface SignInDeps {
  config: Config;
  sessions: SessionStore;
  audit: AuditLog;
  relyingParty: RelyingParty;
  transactions: LoginTransactions;
  authLimiter: RateLimiter;
  /** Seals refresh tokens (SESSION_ENCRYPTION_KEY's keys, else the stored one: credentials/session-key-store.ts). */
  cipher: TokenCipher;
  /** Codes handing a session to a service host (design.md §4.16). */
  handoffs: HostHandoffs;
  /** Which return addresses (`rd`) a sign-in takes. */
  returnRules: ReturnAddressRules;
  logger: Logger;
}

/** The part of a `User-Agent` a session keeps for the sessions list, in characters. */
const MAX_USER_AGENT_LENGTH = 300;

/** A callback that cannot become a session; `reason` is safe to show and to audit. */
class LoginFailure extends Error {}

/**
 * Sign-in (interface.md §4.1, §5; design.md §4): `login` sends the browser to the identity
 * provider, `callback` (POST for form_post, GET for query) turns its answer into a session.
 */
export function createSignInHandlers(deps: SignInDeps): { login: Handler; callback: Handler } {
  const notice = new RefreshTokenNotice(deps.config, deps.logger);
  return {
    login: (ctx) => login(deps, ctx),
    callback: (ctx) => callback(deps, notice, ctx),
  };
}

/**
 * `GET /auth/login[?returnTo][?rd&bind][&max_age][&acr_values]` → 302 to the provider's
 * authorization URL, with the transaction cookie that binds the sign-in to this browser (a key it
 * already holds is kept). `rd` (design.md §4.16, return-address.ts) is an absolute return address;
 * one on a service host comes with `bind`, the hash of that host's hand-off cookie, and a browser
 * already signed in here is handed to the host at once, without the provider (nor an attempt
 * counted), unless it is a step-up. `max_age` and `acr_values` (design.md §4.18, step-up.ts
 * `readStepUpQuery`) make it a step-up: asked of the provider and checked at the callback.
 * @throws {GatewayError} BAD_REQUEST for an `rd` refused, or a service host's without `bind` or on
 *   ADMIN_URL's origin (whose sessions are the console's alone), or a malformed `max_age` or
 *   `acr_values`; 429 past RATE_LIMIT_AUTH.
 */
async function login(deps: SignInDeps, ctx: RequestContext): Promise<void> {
  const params = ctx.url.searchParams;
  const { returnTo, handoff } = returnOf(deps.returnRules, params);
  const stepUp = readStepUpQuery(params);
  if (stepUp === null) throw new GatewayError('BAD_REQUEST');
  // Only the public origin's sessions are services' (design.md §4.5): ADMIN_URL's never leave it.
  if (handoff !== undefined && ctx.origin.kind !== 'public') throw new GatewayError('BAD_REQUEST');
  if (handoff !== undefined && ctx.session !== null && stepUp === undefined) {
    return sendToServiceHost(deps.handoffs, ctx.res, deps.config.publicUrl, { ...handoff, handle: ctx.session.handle });
  }
  await countAttempt(deps.authLimiter, ctx);
  const redirectUri = ctx.origin.callbackUrl;
  const started = await deps.relyingParty.startLogin(redirectUri, stepUp);
  const { state, nonce, codeVerifier } = started;
  const browserKey = browserKeyOf(ctx) ?? newBrowserKey();
  const transaction = { state, nonce, codeVerifier, returnTo, redirectUri, browserKeyHash: browserKeyHash(browserKey) };
  const stepped = stepUp && { stepUp, ...(ctx.session && { sessionHandle: ctx.session.handle }) };
  deps.transactions.save({ ...transaction, ...(handoff && { handoff }), ...stepped });
  redirect(ctx.res, started.authorizationUrl.href, { 'set-cookie': ctx.origin.cookies.transaction(browserKey) });
}

/**
 * Where a login returns to: `rd` when given (refused: 400), else `returnTo` (made safe: return-to.ts).
 * @throws {GatewayError} BAD_REQUEST as {@link login} says.
 */
function returnOf(rules: ReturnAddressRules, params: URLSearchParams): { returnTo: string; handoff?: LoginTransaction['handoff'] } {
  const rd = params.get('rd');
  if (rd === null) return { returnTo: safeReturnTo(params.get('returnTo')) };
  const address = readReturnAddress(rd, rules);
  if (address === undefined) throw new GatewayError('BAD_REQUEST');
  if (address.kind === 'admin') return { returnTo: address.url };
  if (address.kind === 'public') return { returnTo: address.returnTo };
  const binding = params.get('bind');
  if (binding === null || !isWellFormedSecret(binding)) throw new GatewayError('BAD_REQUEST');
  return { returnTo: '/', handoff: { host: address.host, returnTo: address.returnTo, binding } };
}

/**
 * `/auth/callback` → 302 to the transaction's `returnTo` with the new session's cookie; the
 * browser's previous session, if any, ends, and the sign-in is audited (`USER_LOGIN`). A response
 * that cannot become a session is a 400 page (failLogin); one without a refresh token is noted
 * once per process (`notice`). A step-up (design.md §4.18) whose ID token falls short of what was
 * asked is a 403 page, the session kept as it was (refuseStepUp); one that meets it updates the
 * browser's session in place when it can (step-up-session.ts), so no second session is made.
 */
async function callback(deps: SignInDeps, notice: RefreshTokenNotice, ctx: RequestContext): Promise<void> {
  const { config } = deps;
  const method = ctx.req.method === 'POST' ? 'POST' : 'GET';
  const params = method === 'POST' ? await readFormBody(ctx) : ctx.url.searchParams;
  let transaction: LoginTransaction;
  let completed;
  try {
    transaction = takeTransaction(deps.transactions, ctx, params);
    completed = await deps.relyingParty.completeLogin(params, method, transaction, ctx.span);
  } catch (error) {
    await failLogin(deps, ctx, error);
    return;
  }
  const user: SessionUser = { ...userFromClaims(completed.claims, config), ...completed.signIn };
  const { handoff, stepUp } = transaction;
  const shortfall = stepUp && stepUpShortfall(completed.signIn, stepUp, Date.now());
  if (shortfall) return refuseStepUp(deps, ctx, transaction, shortfall);
  notice.signedIn(completed.refreshToken);
  const { handle, cookie, steppedUp } = await signedInSession(deps, ctx, transaction, user, completed);
  const details = { email: user.email, isAdmin: user.isAdmin, ...(stepUp && { stepUp: true, sameSession: steppedUp }) };
  deps.audit.record({ action: 'USER_LOGIN', userId: user.sub, serviceId: null, ipAddress: ctx.clientIp, details });
  if (handoff !== undefined) return sendToServiceHost(deps.handoffs, ctx.res, config.publicUrl, { ...handoff, handle }, cookie);
  redirect(ctx.res, transaction.returnTo, cookie);
}

/**
 * The session a completed sign-in leaves the browser with: a step-up's session updated in place
 * (step-up-session.ts; no cookie to set), else a new one (its cookie), the browser's earlier one
 * ended: the callback's cookie's, and a step-up's that could not be updated (another user,
 * provider session or origin).
 */
async function signedInSession(
  deps: SignInDeps,
  ctx: RequestContext,
  transaction: LoginTransaction,
  user: SessionUser,
  completed: CompletedLogin,
): Promise<{ handle: string; cookie: Record<string, string>; steppedUp: boolean }> {
  const { sessions } = deps;
  const current = transaction.sessionHandle === undefined ? null : await sessions.byHandle(transaction.sessionHandle);
  if (transaction.stepUp !== undefined && (await stepUpInPlace(sessions, deps.cipher, current, ctx.origin.sessionScope, user, completed))) {
    return { handle: current!.handle, cookie: {}, steppedUp: true };
  }
  if (ctx.sessionId) await sessions.destroy(ctx.sessionId);
  if (current !== null) await sessions.revoke([current.handle]);
  const session = newSession(deps, ctx, user, completed);
  const sessionId = await sessions.create(session);
  return { handle: session.handle, cookie: { 'set-cookie': ctx.origin.cookies.session(sessionId, deps.config.sessionTtlMs) }, steppedUp: false };
}

/**
 * A step-up sign-in whose ID token falls short of what was asked (design.md §4.18): 403 with a page
 * saying what is needed and a link to try again, the session untouched; audited as `LOGIN_FAILED`
 * and counted as an attempt (RATE_LIMIT_AUTH), so a provider that cannot give it is not asked in a
 * loop. Never a redirect: the browser would come back to the step-up it just failed.
 */
async function refuseStepUp(deps: SignInDeps, ctx: RequestContext, transaction: LoginTransaction, shortfall: string): Promise<void> {
  const stepUp = transaction.stepUp!;
  const reason = `Step-up sign-in not met: ${shortfall}`;
  ctx.logger.warn({ reason, ip: ctx.clientIp }, 'login failed');
  deps.audit.record({ action: 'LOGIN_FAILED', userId: null, serviceId: null, ipAddress: ctx.clientIp, details: { reason } });
  await countAttempt(deps.authLimiter, ctx);
  // "Try again" is the page itself: its service asks for the step-up again, with its own requirement
  const { handoff } = transaction;
  const retry = handoff === undefined ? transaction.returnTo : serviceHostOrigin(deps.config.publicUrl, handoff.host) + handoff.returnTo;
  sendHtml(ctx.res, 403, stepUpRefusedPage(stepUp, shortfall, retry));
}

/** Counts an authentication attempt (design.md §5); throws 429 past RATE_LIMIT_AUTH. */
async function countAttempt(limiter: RateLimiter, ctx: RequestContext): Promise<void> {
  refuseOverLimit(await limiter.consume(rateLimitKey(ctx.clientIp)));
}

/** The key in this browser's transaction cookie on the request's origin, if it holds one. */
function browserKeyOf(ctx: RequestContext): string | undefined {
  return browserKeyFrom(readCookie(ctx.req.headers.cookie, ctx.origin.cookies.names.transaction));
}

/**
 * Takes the callback's transaction, if this browser started it (browser-binding.ts).
 * @throws {LoginFailure} when the state is missing, unknown, used, expired or another browser's.
 */
function takeTransaction(transactions: LoginTransactions, ctx: RequestContext, params: URLSearchParams): LoginTransaction {
  const state = params.get('state');
  const taken = state ? transactions.take(state, browserKeyOf(ctx)) : 'unknown';
  if (taken === 'other-browser') throw new LoginFailure('The sign-in response does not belong to this browser (state mismatch).');
  if (taken === 'unknown') throw new LoginFailure('This sign-in has expired or was already used.');
  return taken;
}

/**
 * The session a completed sign-in makes: a new handle, the provider's `sid` (back-channel logout)
 * and, when the provider issued one, the refresh token sealed to that handle
 * (session-revalidator.ts re-checks the session with it).
 */
function newSession(deps: SignInDeps, ctx: RequestContext, user: SessionUser, completed: CompletedLogin): Session {
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
    expiresAt: now + deps.config.sessionTtlMs,
    lastSeenAt: now,
    checkedAt: now,
    ipAddress: ctx.clientIp,
    userAgent: (ctx.req.headers['user-agent'] ?? '').slice(0, MAX_USER_AGENT_LENGTH),
    ...(typeof sid === 'string' && sid !== '' ? { sid } : {}),
    ...(completed.refreshToken !== undefined ? { refreshToken: deps.cipher.encrypt(completed.refreshToken, handle) } : {}),
    ...(scope ? { scope } : {}),
  };
}

/**
 * Audits a failed callback, counts it as an attempt, and answers 400 with the reason (or 429).
 * @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE as it came: the provider, not the sign-in, failed.
 */
async function failLogin(deps: SignInDeps, ctx: RequestContext, error: unknown): Promise<void> {
  if (error instanceof GatewayError && error.code === 'IDENTITY_PROVIDER_UNAVAILABLE') throw error;
  const reason = describeFailure(error);
  ctx.logger.warn({ reason, ip: ctx.clientIp }, 'login failed');
  deps.audit.record({ action: 'LOGIN_FAILED', userId: null, serviceId: null, ipAddress: ctx.clientIp, details: { reason } });
  await countAttempt(deps.authLimiter, ctx);
  sendHtml(ctx.res, 400, loginFailedPage(reason));
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
