import type { RateLimiter } from '../../shared/backends/rate-limiter.js';
import type { ReplayGuard } from '../../shared/backends/replay-guard.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Config } from '../../shared/config/config.js';
import { GatewayError } from '../../shared/errors.js';
import { sendJson } from '../../shared/http/http-response.js';
import type { IssuerKeys } from '../../shared/identity/issuer-keys.js';
import type { Logger } from '../../shared/logger.js';
import type { Session } from '../../shared/types.js';
import { InvalidLogoutToken, verifyLogoutToken, type LogoutRequest } from '../oidc/logout-token.js';
import { RefusalTally } from '../oidc/refusal-tally.js';
import { RefusedCallerLimit } from '../oidc/refused-caller-limit.js';
import { readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { SessionRevocation } from '../sessions/session-revocation.js';

/** Largest logout request read, in bytes: a logout token is well under 2 KB (§2.4 claims, one signature). */
const MAX_LOGOUT_BODY_BYTES = 8 * 1024;
/** Errors of reading the body that are the caller's doing (413 too large, 408 stalled): refusals, answered as they are. */
const BODY_FAULTS: ReadonlySet<string> = new Set(['BODY_TOO_LARGE', 'REQUEST_TIMEOUT']);
/** §2.8: responses must not be cached. */
const NO_STORE = { 'cache-control': 'no-store' };

export interface BackchannelLogoutDeps {
  config: Pick<Config, 'oidc'>;
  sessions: SessionStore;
  revocation: SessionRevocation;
  usedTokenIds: ReplayGuard;
  /** OIDC_ISSUER's keys; undefined when no issuer is configured (every token is then refused). */
  issuerKeys: IssuerKeys | undefined;
  /** RATE_LIMIT_AUTH's limiter, which counts this endpoint's refused calls only. */
  authLimiter: RateLimiter;
  logger: Logger;
}

/** Why a call is refused (a fixed text, logged in the tally), and the error it is answered with (else 400). */
interface Refusal {
  reason: string;
  error?: GatewayError;
}

/**
 * `POST /auth/backchannel-logout` (OpenID Connect Back-Channel Logout 1.0 §2.5–2.8): the identity
 * provider posts `logout_token`; a valid one (logout-token.ts) whose `jti` was never used before
 * (across processes, for as long as the token could be accepted) ends every session of its `sid`
 * (of that `sub` too when it names one) or, with only `sub`, every session of the user, and answers
 * 200 with `Cache-Control: no-store`. Anything else answers 400 `{"error":"invalid_request"}` and
 * ends nothing; a body over 8 KiB, 413. A valid `sid` with no session here is 200 as well: the
 * provider may know sessions the gateway never had.
 *
 * Hardened against whoever can reach the endpoint (it takes no session and no CSRF token): a
 * refused call costs its address a point of RATE_LIMIT_AUTH and an address over that limit gets
 * 429 before its body is read (refused-caller-limit.ts), while accepted calls cost nothing, so a
 * provider's logouts are never limited; refusals are logged at most once a minute, with counts
 * per reason (refusal-tally.ts), never the token.
 */
export function createBackchannelLogoutHandler(deps: BackchannelLogoutDeps): Handler {
  const limit = new RefusedCallerLimit(deps.authLimiter);
  const refusals = new RefusalTally(deps.logger, 'back-channel logout');
  return async (ctx) => {
    limit.admit(ctx.clientIp);
    const outcome = await readLogout(ctx, deps);
    if ('reason' in outcome) {
      refusals.refused(outcome.reason);
      await limit.refused(ctx.clientIp);
      if (outcome.error) throw outcome.error;
      return sendJson(ctx.res, 400, { error: 'invalid_request' }, NO_STORE);
    }
    const ended = await deps.revocation.end(await sessionsNamed(outcome, deps.sessions), { userId: null, ipAddress: ctx.clientIp }, 'backchannel-logout');
    ctx.logger.info({ sessions: ended }, 'back-channel logout');
    ctx.res.writeHead(200, NO_STORE).end();
  };
}

/**
 * The logout the request asks for, or why it is refused.
 * @throws what IssuerKeys throws when the issuer's keys cannot be fetched (the provider's fault, not the caller's: 503).
 */
async function readLogout(ctx: RequestContext, deps: BackchannelLogoutDeps): Promise<LogoutRequest | Refusal> {
  const { issuerKeys, config } = deps;
  let token: string | null;
  try {
    token = (await readFormBody(ctx, MAX_LOGOUT_BODY_BYTES)).get('logout_token');
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'BAD_REQUEST') return { reason: 'not a form body' };
    if (error instanceof GatewayError && BODY_FAULTS.has(error.code)) return { reason: error.message, error };
    throw error;
  }
  if (!token) return { reason: 'no logout_token' };
  if (issuerKeys === undefined || config.oidc.clientId === undefined) return { reason: 'OIDC_ISSUER and OIDC_CLIENT_ID are not set' };
  const { issuer, key } = await issuerKeys.keySet();
  let request: LogoutRequest;
  try {
    request = await verifyLogoutToken(token, { issuer, clientId: config.oidc.clientId, keys: key });
  } catch (error) {
    if (error instanceof InvalidLogoutToken) return { reason: error.message };
    throw error;
  }
  if (!(await deps.usedTokenIds.firstUse(request.jti, request.rememberUntil * 1000))) return { reason: 'logout token: jti already used' };
  return request;
}

/** §2.4: a `sid` names one provider session (of `sub` too when given); `sub` alone names all of the user's. */
async function sessionsNamed(request: LogoutRequest, sessions: SessionStore): Promise<Session[]> {
  if (request.sid === undefined) return sessions.find({ sub: request.sub! });
  const ofSid = await sessions.find({ sid: request.sid });
  return request.sub === undefined ? ofSid : ofSid.filter((session) => session.user.sub === request.sub);
}
