import { hash, randomBytes } from 'node:crypto';
import type { Session } from './types.js';

/**
 * Where sessions live. The admin plane creates and destroys them; the data plane reads them.
 * Implementations store a session under the SHA-256 of its id, never the id itself, so a leaked
 * store does not leak usable cookies. Expired sessions read as null.
 */
export interface SessionStore {
  /** Stores `session` under a new random id (256 bits) and returns that id, the cookie's value. */
  create(session: Session): Promise<string>;
  /** The live session for a cookie value, or null when unknown, expired or destroyed. */
  get(sessionId: string): Promise<Session | null>;
  /** Deletes the session everywhere, at once (logout). Unknown ids are ignored. */
  destroy(sessionId: string): Promise<void>;
  close(): Promise<void>;
}

/** A new session id: 32 random bytes, base64url (43 chars). */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

/** The storage key for a session id: SHA-256, base64url. */
export function sessionKey(sessionId: string): string {
  return hash('sha256', sessionId, 'base64url'); // one-shot: a third of createHash's cost per request
}

/** Session ids are exactly what {@link newSessionId} makes; anything else is not looked up. */
export function isWellFormedSessionId(value: string): boolean {
  return value.length === 43 && /^[A-Za-z0-9_-]+$/.test(value);
}
