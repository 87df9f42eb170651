import type { Session } from '../types.js';

interface Entry {
  session: Session;
  /** Epoch ms when the backing store last confirmed the session. */
  validatedAt: number;
}

/**
 * A process-local session cache in front of a session store (Redis, or SQLite in embedded mode):
 * positive entries only, keyed by the session key hash, each served for `ttlMs` after the store
 * confirmed it. Bounded: past `maxEntries` the least recently validated entry goes first (a Map
 * keeps insertion order; re-validating re-inserts). Expiry is the caller's to check.
 */
export class SessionCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;
  readonly #ttlMs: number;

  constructor(maxEntries: number, ttlMs: number) {
    this.#maxEntries = maxEntries;
    this.#ttlMs = ttlMs;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The session when it was validated less than the TTL ago; a stale entry is dropped. */
  fresh(key: string, now: number): Session | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now - entry.validatedAt < this.#ttlMs) return entry.session;
    this.#entries.delete(key);
    return undefined;
  }

  /** Records that the store confirmed `session` at `now` (epoch ms). */
  set(key: string, session: Session, now: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { session, validatedAt: now });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
