import type { Session } from '../../../types.js';
import { ExpiringCache } from '../../../expiring-cache.js';
import type { ChannelSubscriptions } from '../connection/channel-subscriptions.js';
import { SESSION_REVOKED_CHANNEL } from '../redis-keys.js';

/**
 * The Redis session store's local cache (design.md §4.12): the sessions Redis confirmed, by key
 * hash, each served for a TTL after that, so the data plane does not ask Redis per request. Ending
 * or changing a session anywhere PUBLISHes its key hash on `gatehouse:session-revoked`; this cache
 * subscribes and evicts that entry, and after the subscriber reconnects (messages may have been
 * missed) drops every entry. A read from Redis that raced with such an eviction is not cached
 * ({@link readThrough}).
 */
export class ConfirmedSessionCache {
  readonly #cache: ExpiringCache<Session>;
  readonly #ttlMs: number;
  readonly #unsubscribe: () => void;
  readonly #stopReconnectWatch: () => void;
  /** Bumped by every eviction from outside: a read that raced with one is not cached. */
  #evictions = 0;

  /**
   * @param ttlMs how long a confirmed session is served, in ms.
   * @param maxEntries most sessions cached at once; the least recently confirmed goes first.
   */
  constructor(subscriptions: ChannelSubscriptions, ttlMs: number, maxEntries: number) {
    this.#cache = new ExpiringCache(maxEntries);
    this.#ttlMs = ttlMs;
    this.#unsubscribe = subscriptions.subscribe(SESSION_REVOKED_CHANNEL, (hash) => this.evict(hash));
    this.#stopReconnectWatch = subscriptions.onReconnect(() => this.#evictAll());
  }

  /** The session under `key` while confirmed within the TTL at `now` (epoch ms), else undefined. */
  get(key: string, now: number): Session | undefined {
    return this.#cache.get(key, now);
  }

  /** Caches `session` under `key`: Redis confirmed it just now. */
  confirmed(key: string, session: Session): void {
    this.#cache.set(key, session, Date.now() + this.#ttlMs);
  }

  /** Forgets `key` in this cache only (this process is ending the session itself). */
  delete(key: string): void {
    this.#cache.delete(key);
  }

  /** Forgets `key` and keeps a read of it under way from being cached (the session changed). */
  evict(key: string): void {
    this.#evictions++;
    this.#cache.delete(key);
  }

  /**
   * A cache miss: reads `key` with `read` (from Redis), then caches what it found unless an
   * eviction raced with the read, or forgets `key` when it found nothing.
   * @returns what `read` returned; rejects as `read` does.
   */
  async readThrough(key: string, read: (key: string) => Promise<Session | null>): Promise<Session | null> {
    const evictionsBefore = this.#evictions;
    const session = await read(key);
    if (session === null) this.#cache.delete(key);
    else if (this.#evictions === evictionsBefore) this.confirmed(key, session);
    return session;
  }

  /** Stops listening for revocations and drops every entry. */
  close(): void {
    this.#unsubscribe();
    this.#stopReconnectWatch();
    this.#cache.clear();
  }

  #evictAll(): void {
    this.#evictions++;
    this.#cache.clear();
  }
}
