import { gatewayCookieNames, readCookie } from '../../shared/http/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { SessionGate } from '../../shared/identity/session-gate.js';
import type { SessionUser } from '../../shared/types.js';
import { errorCode } from '../../shared/error-code.js';
import type { RequestIdentity } from '../pipeline/request-identity.js';
import { SpanKind } from '../../shared/tracing/span-export.js';

/**
 * Step 5 of the data plane (design.md §3.5): who the caller is, from the gateway's session cookie.
 * The data plane reads sessions and records their use; the admin plane creates, refreshes and ends them.
 */
export class SessionCheck {
  readonly #gate: SessionGate;
  readonly #cookieName: string;
  readonly #logger: Logger;

  /** `publicUrl` decides the cookie's name (`gw_session`, or `__Host-gw_session` on https). */
  constructor(gate: SessionGate, publicUrl: URL, logger: Logger) {
    this.#gate = gate;
    this.#cookieName = gatewayCookieNames(publicUrl).session;
    this.#logger = logger;
  }

  /**
   * The signed-in user for a request's `Cookie` value, or undefined without a live session. On a
   * service host (`serviceHost`, design.md §4.16) the cookie names a host session: the user's
   * session it links to, on that host alone. `identity`: the request's id (named in the store's
   * failure) and trace (a sampled one gets a `session lookup` span around the check).
   * When the store fails, a protected service (`required`) cannot decide who is calling and gets
   * 503; a public one carries on anonymously.
   * @throws {GatewayError} `SESSION_STORE_UNAVAILABLE` when the store fails and `required`.
   */
  async user(cookieHeader: string | undefined, required: boolean, serviceHost: string | undefined, identity?: RequestIdentity): Promise<SessionUser | undefined> {
    const sessionId = readCookie(cookieHeader, this.#cookieName);
    if (!sessionId) return undefined;
    const span = identity?.trace?.child('session lookup', SpanKind.INTERNAL, {});
    try {
      const session = serviceHost === undefined ? await this.#gate.admit(sessionId) : (await this.#gate.admitLink(sessionId, serviceHost))?.session;
      // An admin-origin session (design.md §4.5) is the console's alone, never a proxied service's.
      return session != null && session.scope === undefined ? session.user : undefined;
    } catch (error) {
      // Only the error's kind is logged: a store's message could quote the key looked up.
      this.#logger.error({ code: errorCode(error), name: (error as Error)?.name, requestId: identity?.requestId }, 'session store unavailable');
      span?.setAttribute('error.type', errorCode(error) ?? 'store unavailable');
      if (required) throw new GatewayError('SESSION_STORE_UNAVAILABLE');
      return undefined;
    } finally {
      span?.end();
    }
  }
}
