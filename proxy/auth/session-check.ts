import { gatewayCookieNames, readCookie } from '../../shared/http/cookies.js';
import { GatewayError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { SessionGate } from '../../shared/identity/session-gate.js';
import type { SessionUser } from '../../shared/types.js';
import { errorCode } from '../../shared/error-code.js';
import type { RequestIdentity } from '../pipeline/request-identity.js';
import { SpanKind } from '../../shared/tracing/span-export.js';
import type { RequestTrace } from '../../shared/tracing/request-trace.js';
import type { StoreReadWatch } from '../../shared/backends/session-store.js';

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
   * failure) and trace (a sampled one gets a `session lookup` span around each read that goes past
   * the store's cache to SQLite or Redis; a cache hit, nearly every request, makes none).
   * When the store fails, a protected service (`required`) cannot decide who is calling and gets
   * 503; a public one carries on anonymously.
   * @throws {GatewayError} `SESSION_STORE_UNAVAILABLE` when the store fails and `required`.
   */
  async user(cookieHeader: string | undefined, required: boolean, serviceHost: string | undefined, identity?: RequestIdentity): Promise<SessionUser | undefined> {
    const sessionId = readCookie(cookieHeader, this.#cookieName);
    if (!sessionId) return undefined;
    const watch = identity?.trace?.span && lookupSpans(identity.trace);
    try {
      const session = serviceHost === undefined ? await this.#gate.admit(sessionId, watch) : (await this.#gate.admitLink(sessionId, serviceHost, watch))?.session;
      // An admin-origin session (design.md §4.5) is the console's alone, never a proxied service's.
      return session != null && session.scope === undefined ? session.user : undefined;
    } catch (error) {
      // Only the error's kind is logged: a store's message could quote the key looked up.
      this.#logger.error({ code: errorCode(error), name: (error as Error)?.name, requestId: identity?.requestId }, 'session store unavailable');
      if (required) throw new GatewayError('SESSION_STORE_UNAVAILABLE');
      return undefined;
    }
  }
}

/** Each store read of a sampled request as a `session lookup` span, `error.type` on a failed one. */
function lookupSpans(trace: RequestTrace): StoreReadWatch {
  return async (read) => {
    const span = trace.child('session lookup', SpanKind.INTERNAL, {});
    try {
      return await read();
    } catch (error) {
      span?.setAttribute('error.type', errorCode(error) ?? 'store unavailable');
      throw error;
    } finally {
      span?.end();
    }
  };
}
