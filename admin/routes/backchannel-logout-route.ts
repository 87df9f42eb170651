import type { ReplayGuard } from '../../shared/backends/replay-guard.js';
import type { SessionStore } from '../../shared/backends/session-store.js';
import type { Config } from '../../shared/config/config.js';
import { GatewayError } from '../../shared/errors.js';
import { sendJson } from '../../shared/http/http-response.js';
import type { IssuerKeys } from '../../shared/identity/issuer-keys.js';
import type { Logger } from '../../shared/logger.js';
import type { Session } from '../../shared/types.js';
import { InvalidLogoutToken, verifyLogoutToken, type LogoutRequest } from '../oidc/logout-token.js';
import { readFormBody } from '../http/request-body.js';
import type { Handler, RequestContext } from '../http/request-context.js';
import type { SessionRevocation } from '../sessions/session-revocation.js';

/** Largest logout request read, in bytes: a logout token is well under 2 KB (§2.4 claims, one signature). */
const MAX_LOGOUT_BODY_BYTES = 8 * 1024;
/** §2.8: responses must not be cached. */
const NO_STORE = { 'cache-control': 'no-store' };

export interface BackchannelLogoutDeps {
  config: Pick<Config, 'oidc'>;
  sessions: SessionStore;
  revocation: SessionRevocation;
  usedTokenIds: ReplayGuard;
  /** OIDC_ISSUER's keys; undefined when no issuer is configured (every token is then refused). */
  issuerKeys: IssuerKeys | undefined;
  logger: Logger;
}

/**
 * `POST /auth/backchannel-logout` (OpenID Connect Back-Channel Logout 1.0 §2.5–2.8): the identity
 * provider posts `logout_token`; a valid one (logout-token.ts) whose `jti` was never used before
 * (across processes, for as long as the token could be accepted) ends every session of its `sid`
 * (of that `sub` too when it names one) or, with only `sub`, every session of the user, and answers
 * 200 with `Cache-Control: no-store`. Anything else answers 400 `{"error":"invalid_request"}` and
 * ends nothing; a body over 8 KB, 413. A valid `sid` with no session here is 200 as well: the
 * provider may know sessions the gateway never had. The reason a token was refused is logged, never
 * the token.
 */
export function createBackchannelLogoutHandler(deps: BackchannelLogoutDeps): Handler {
  return async (ctx) => {
    const request = await acceptedRequest(ctx, deps);
    if (request === null) return sendJson(ctx.res, 400, { error: 'invalid_request' }, NO_STORE);
    const ended = await deps.revocation.end(await sessionsNamed(request, deps.sessions), { userId: null, ipAddress: ctx.clientIp }, 'backchannel-logout');
    deps.logger.info({ sessions: ended }, 'back-channel logout');
    ctx.res.writeHead(200, NO_STORE).end();
  };
}

/** The logout the request asks for, or null (logged) when it must be refused with 400. */
async function acceptedRequest(ctx: RequestContext, deps: BackchannelLogoutDeps): Promise<LogoutRequest | null> {
  const { issuerKeys, config } = deps;
  let token: string | null;
  try {
    token = (await readFormBody(ctx, MAX_LOGOUT_BODY_BYTES)).get('logout_token');
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'BAD_REQUEST') return refused(deps, 'not a form body');
    throw error;
  }
  if (!token) return refused(deps, 'no logout_token');
  if (issuerKeys === undefined || config.oidc.clientId === undefined) return refused(deps, 'OIDC_ISSUER and OIDC_CLIENT_ID are not set');
  const { issuer, key } = await issuerKeys.keySet();
  let request: LogoutRequest;
  try {
    request = await verifyLogoutToken(token, { issuer, clientId: config.oidc.clientId, keys: key });
  } catch (error) {
    if (error instanceof InvalidLogoutToken) return refused(deps, error.message);
    throw error;
  }
  if (!(await deps.usedTokenIds.firstUse(request.jti, request.rememberUntil * 1000))) return refused(deps, 'logout token: jti already used');
  return request;
}

function refused(deps: BackchannelLogoutDeps, reason: string): null {
  deps.logger.warn({ reason }, 'back-channel logout refused');
  return null;
}

/** §2.4: a `sid` names one provider session (of `sub` too when given); `sub` alone names all of the user's. */
async function sessionsNamed(request: LogoutRequest, sessions: SessionStore): Promise<Session[]> {
  if (request.sid === undefined) return sessions.find({ sub: request.sub! });
  const ofSid = await sessions.find({ sid: request.sid });
  return request.sub === undefined ? ofSid : ofSid.filter((session) => session.user.sub === request.sub);
}
