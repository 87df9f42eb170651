import { hash } from 'node:crypto';
import type { Session } from '../types.js';

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

/** The storage key for a session id: SHA-256, base64url. */
export function sessionKey(sessionId: string): string {
  return hash('sha256', sessionId, 'base64url'); // one-shot: a third of createHash's cost per request
}
