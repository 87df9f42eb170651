import type { Config } from '../config/config.js';
import { ExpiringCache } from '../expiring-cache.js';
import type { Logger } from '../logger.js';
import { sessionKey, type SessionLink, type SessionStore, type StoreReadWatch } from '../backends/session-store.js';
import type { Session } from '../types.js';
import { isWellFormedSecret } from './secrets.js';

/** Longest gap between two recorded uses of a session, in ms ("at most once a minute"). */
const TOUCH_INTERVAL_MS = 60_000;
/** Longest gap between two asks to re-check a session that stays due (the admin plane may have missed one), in ms. */
const ASK_AGAIN_MS = 10_000;
/** Sessions whose last ask or use this process remembers (each a few dozen bytes). */
const REMEMBERED = 50_000;

/** SESSION_REVALIDATE, SESSION_REVALIDATE_GRACE and SESSION_IDLE_TIMEOUT, in ms. */
export type SessionChecks = Config['sessionChecks'];

/** The defaults of design.md §6 (5 minutes, an hour, no idle timeout), for stores opened without a Config. */
export const DEFAULT_SESSION_CHECKS: SessionChecks = { revalidateMs: 5 * 60_000, graceMs: 3_600_000, idleTimeoutMs: undefined };

/**
 * Whether a stored session may serve a request now, and what using it sets going, for both planes
 * (proxy/auth/session-check.ts, admin/admin-plane.ts). On the request path it is comparisons and two
 * map lookups; the rest happens beside the request:
 * - ended: past its `expiresAt`; unused for SESSION_IDLE_TIMEOUT (by its last recorded use, or this
 *   process's own later one); or its provider down for longer than SESSION_REVALIDATE_GRACE;
 * - a use is recorded in the store at most once a minute per session and process (four times per
 *   idle timeout when that is shorter than four minutes, so a used session never reads as idle);
 * - a session with a refresh token not checked at the provider for SESSION_REVALIDATE is sent to
 *   the admin plane for a refresh (admin/sessions/session-revalidator.ts), asked again every 10 s
 *   while it stays due; the request goes on with the session as it is.
 */
export class SessionGate {
  readonly #store: SessionStore;
  readonly #checks: SessionChecks;
  readonly #logger: Logger;
  readonly #touchIntervalMs: number;
  readonly #askAgainMs: number;
  /** Handle → epoch ms of this process's latest recorded use, while a new record is not due. */
  readonly #touched = new ExpiringCache<number>(REMEMBERED);
  /** Handles asked to be re-checked, while asking again is not due. */
  readonly #asked = new ExpiringCache<true>(REMEMBERED);

  constructor(store: SessionStore, checks: SessionChecks, logger: Logger) {
    this.#store = store;
    this.#checks = checks;
    this.#logger = logger;
    const idle = checks.idleTimeoutMs;
    this.#touchIntervalMs = idle === undefined ? TOUCH_INTERVAL_MS : Math.min(TOUCH_INTERVAL_MS, Math.ceil(idle / 4));
    this.#askAgainMs = Math.min(ASK_AGAIN_MS, checks.revalidateMs);
  }

  /**
   * The session of a cookie value when it may serve a request now, else null; records the use.
   * A session that looks idle from this process's cache is read once more from the store, since
   * another process may have recorded a later use. `watch` runs each read that goes past the
   * store's cache (the data plane's `session lookup` span).
   * @throws what {@link SessionStore.get} throws (the store unreachable).
   */
  admit(sessionId: string, watch?: StoreReadWatch): Promise<Session | null> {
    // A malformed cookie never costs a store read.
    return isWellFormedSecret(sessionId) ? this.#admitKey(sessionKey(sessionId), watch) : Promise.resolve(null);
  }

  /**
   * A service host's session (design.md §4.16): the session its cookie's link names, admitted as
   * by {@link admit}, when the link was made for `host` (the request's, in normal form); else null.
   * @throws what {@link SessionStore.getLink} and {@link SessionStore.getByKey} throw.
   */
  async admitLink(linkId: string, host: string, watch?: StoreReadWatch): Promise<{ session: Session; link: SessionLink } | null> {
    const link = await this.#store.getLink(linkId, watch);
    if (link === null || link.host !== host) return null;
    const session = await this.#admitKey(link.sessionKey, watch);
    return session === null ? null : { session, link };
  }

  async #admitKey(key: string, watch?: StoreReadWatch): Promise<Session | null> {
    const now = Date.now();
    let session = await this.#store.getByKey(key, { watch });
    if (session !== null && this.#idle(session, now)) session = await this.#store.getByKey(key, { fresh: true, watch });
    if (session === null) return null;
    // Asked first: a session refused for its provider's outage is then ended (and audited) by the admin plane.
    this.#askForCheck(session, now);
    if (this.#ended(session, now)) return null;
    this.#recordUse(key, session, now);
    return session;
  }

  #ended(session: Session, now: number): boolean {
    if (session.expiresAt <= now || this.#idle(session, now)) return true;
    return session.providerDownSince !== undefined && now - session.providerDownSince > this.#checks.graceMs;
  }

  #idle(session: Session, now: number): boolean {
    const idle = this.#checks.idleTimeoutMs;
    if (idle === undefined) return false;
    const lastUse = Math.max(session.lastSeenAt, this.#touched.get(session.handle, now) ?? 0);
    return now - lastUse > idle;
  }

  #recordUse(key: string, session: Session, now: number): void {
    if (now - session.lastSeenAt < this.#touchIntervalMs || this.#touched.get(session.handle, now) !== undefined) return;
    this.#touched.set(session.handle, now, now + this.#touchIntervalMs);
    this.#store.touchByKey(key, now).catch((error: unknown) => {
      this.#logger.warn({ err: error }, 'recording a session use failed; the next use records it');
    });
  }

  #askForCheck(session: Session, now: number): void {
    if (session.refreshToken === undefined || now - session.checkedAt < this.#checks.revalidateMs) return;
    if (this.#asked.get(session.handle, now) !== undefined) return;
    this.#asked.set(session.handle, true, now + this.#askAgainMs);
    this.#store.requestRevalidation(session.handle);
  }
}
