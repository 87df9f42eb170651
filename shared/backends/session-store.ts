import { hash } from 'node:crypto';
import type { Session } from '../types.js';

/** Which sessions {@link SessionStore.list} pages through. */
export interface SessionQuery {
  /** A subject (`sub`) or a verified email (any case): that user's sessions. Absent: everyone's. */
  user?: string;
  /** Page size and start (admin/http/pagination.ts bounds them). */
  limit: number;
  offset: number;
}

/** What a service host's session cookie names (design.md §4.16): a user's session on one host. */
export interface SessionLink {
  /** The storage key ({@link sessionKey}) of the session it stands for. */
  sessionKey: string;
  /** The service host (normal form: shared/services/host-names.ts) it is valid on, alone. */
  host: string;
  /** The host session's own CSRF token (design.md §4.3): the sign-in origin's is never shown on a service host. */
  csrfToken: string;
}

/**
 * Runs a read that goes past a store's local cache to where the store keeps its sessions (SQLite,
 * Redis) and returns what it returns: the data plane times those reads alone as its `session lookup`
 * span (design.md §3.10), not the cache hits nearly every request is.
 */
export type StoreReadWatch = <T>(read: () => Promise<T>) => Promise<T>;

/** What a session read may ask: `fresh` skips the local cache; `watch` runs the read when it goes past it. */
export interface SessionReadOptions {
  fresh?: boolean;
  watch?: StoreReadWatch;
}

/** Sessions that one event ends together: a user's (sign out everywhere) or a provider session's. */
export type SessionSelector = { sub: string } | { sid: string };

/**
 * Where sessions live. The admin plane creates, lists, updates and ends them; the data plane reads
 * them and records their use. Implementations store a session under the SHA-256 of its id, never
 * the id itself, so a leaked store does not leak usable cookies, and keep it findable by its public
 * handle, its subject, its verified email and its provider session (`sid`) without scanning every
 * session. Expired sessions read as null and leave the lists.
 */
export interface SessionStore {
  /** Stores `session` under a new random id (256 bits) and returns that id, the cookie's value. */
  create(session: Session): Promise<string>;
  /**
   * Makes a host session (design.md §4.16): a new random id (256 bits, the service host's cookie
   * value) linked to the live session `handle` on `host` alone, with its own CSRF token, expiring
   * with the session. It holds nothing of its own: every read goes through the session, so
   * whatever ends the session ends the link at once.
   * @returns the link's id, or null when the session is gone.
   */
  link(handle: string, host: string, csrfToken: string): Promise<string | null>;
  /** The link a host session id names (live or not: its session decides), or null. Reads may be cached: a link never changes. */
  getLink(linkId: string, watch?: StoreReadWatch): Promise<SessionLink | null>;
  /** {@link get} by the session's storage key ({@link sessionKey} of its id), as a link names it. */
  getByKey(key: string, options?: SessionReadOptions): Promise<Session | null>;
  /**
   * The live session for a cookie value, or null when unknown, expired or ended. Reads may be
   * served from a local cache that every change evicts; `fresh` skips it.
   */
  get(sessionId: string, options?: SessionReadOptions): Promise<Session | null>;
  /** Ends the session everywhere, at once (logout). Unknown ids are ignored. */
  destroy(sessionId: string): Promise<void>;
  /**
   * Records a use at `at` (epoch ms) as the session's `lastSeenAt`; with an idle timeout
   * (SESSION_IDLE_TIMEOUT, given to the store), the store ends the session once it goes that long
   * without another. Callers record at most once a minute per session (shared/identity/session-gate.ts),
   * never per request. A session ended meanwhile stays ended.
   */
  touch(sessionId: string, at: number): Promise<void>;
  /** {@link touch} by the session's storage key. */
  touchByKey(key: string, at: number): Promise<void>;
  /** The live session with this public handle, or null. */
  byHandle(handle: string): Promise<Session | null>;
  /**
   * Replaces the live session of `handle` with `change(current)` (same id; what {@link keepIdentity}
   * names is kept as it was) and makes every process read the new one.
   * @returns false when the session is gone (nothing is written).
   */
  update(handle: string, change: (current: Session) => Session): Promise<boolean>;
  /** A page of live sessions, newest first, and how many match in all. */
  list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }>;
  /** Every live session of a subject, or of a provider session. */
  find(selector: SessionSelector): Promise<Session[]>;
  /**
   * Ends the sessions with these handles everywhere (every process stops accepting them within a
   * second). Unknown handles are ignored.
   * @returns how many of them were live.
   */
  revoke(handles: readonly string[]): Promise<number>;
  /**
   * Asks the admin plane to check the session at the identity provider (admin/sessions/
   * session-revalidator.ts). Fire and forget: a request lost is asked again by a later use.
   */
  requestRevalidation(handle: string): void;
  /** Calls `listener` with each handle some process asked to revalidate; returns an unsubscribe. */
  onRevalidationRequest(listener: (handle: string) => void): () => void;
  /**
   * Takes the lock on refreshing `handle` for `ttlMs` (one refresh per session at a time across
   * every process and host). @returns false when another holds it.
   */
  lockRefresh(handle: string, ttlMs: number): Promise<boolean>;
  /** Releases the lock {@link lockRefresh} took. */
  unlockRefresh(handle: string): Promise<void>;
  close(): Promise<void>;
}

/** The storage key for a session id: SHA-256, base64url. */
export function sessionKey(sessionId: string): string {
  return hash('sha256', sessionId, 'base64url'); // one-shot: a third of createHash's cost per request
}

/**
 * What an update may not change: the session's handle, subject, provider session, creation, expiry
 * and last use (the store's own record), so an update can never move a session to someone else or
 * make it outlive its TTL.
 */
export function keepIdentity(current: Session, changed: Session): Session {
  const { handle, sid, createdAt, expiresAt, lastSeenAt } = current;
  return { ...changed, handle, sid, createdAt, expiresAt, lastSeenAt, user: { ...changed.user, sub: current.user.sub } };
}

/** The lower-cased verified email a session is found by, or `''`. */
export function emailKey(session: Session): string {
  return session.user.email.toLowerCase();
}

/** `session` while its expiry (epoch ms) is ahead, else null. */
export function liveSession(session: Session): Session | null {
  return session.expiresAt > Date.now() ? session : null;
}
