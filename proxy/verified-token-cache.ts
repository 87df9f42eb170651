import type { SessionUser } from '../shared/types.js';

interface Entry {
  user: SessionUser;
  /** Epoch ms: the token's `exp`. */
  expiresAt: number;
}

/**
 * Bearer tokens already verified (design.md §4.7), so a client sending the same token again costs
 * a hash and a lookup, not a signature check. Keyed by the token's SHA-256 (the token itself is
 * never kept), each entry served until the token's `exp`. Bounded: past `maxEntries` the entry
 * stored longest ago goes first (a Map keeps insertion order).
 */
export class VerifiedTokenCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The caller of the token hashed to `key`, while `now` (epoch ms) is before its `exp`; an expired entry is dropped. */
  get(key: string, now: number): SessionUser | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now < entry.expiresAt) return entry.user;
    this.#entries.delete(key);
    return undefined;
  }

  /** Records the caller of a verified token whose `exp` is `expiresAt` (epoch ms). */
  set(key: string, user: SessionUser, expiresAt: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { user, expiresAt });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }
}
