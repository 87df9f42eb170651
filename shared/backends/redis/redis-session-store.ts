import type { Redis } from 'ioredis';
import { createLogger, type Logger } from '../../logger.js';
import { isWellFormedSecret, newSessionId } from '../../secrets.js';
import { sessionKey, type SessionStore } from '../session-store.js';
import type { Session } from '../../types.js';
import { RedisUnavailableError } from './redis-errors.js';
import type { RedisConnections } from './redis-connections.js';
import { SESSION_REVOKED_CHANNEL, sessionRedisKey } from './redis-keys.js';
import { ExpiringCache } from '../../expiring-cache.js';

export interface RedisSessionStoreOptions {
  /**
   * How long a session confirmed by Redis is served from the local cache, in ms (default 5,000).
   * It is also how long a session stays usable while Redis is unreachable. Revocations evict at
   * once; this only bounds staleness when a revocation message is lost.
   */
  cacheTtlMs?: number;
  /** Most sessions cached at once (default 10,000); the least recently validated goes first. */
  cacheMaxEntries?: number;
  logger?: Logger;
}

/**
 * Split-mode {@link SessionStore} (design.md §2.1): each session is a JSON string at
 * `gatehouse:session:<sha256(id)>` with `PX` = its remaining lifetime, so Redis expires it.
 * Reads go through a small local {@link ExpiringCache} so the data plane does not hit Redis per
 * request; only live sessions are cached (a session created elsewhere is visible at once).
 * `destroy` DELs the key and PUBLISHes the key hash on `gatehouse:session-revoked` in one MULTI;
 * every instance subscribes and evicts that entry. After the subscriber reconnects (revocations
 * may have been missed) the whole cache is dropped.
 *
 * Faults: while Redis is unreachable `get` serves sessions validated within the cache TTL and
 * rejects for any other (never null for "cannot tell"), so protected routes fail closed.
 * Every rejection is a {@link RedisUnavailableError}, which never quotes the command's arguments.
 */
export class RedisSessionStore implements SessionStore {
  readonly #connections: RedisConnections;
  readonly #redis: Redis;
  /** Sessions Redis confirmed, each served for `cacheTtlMs` after that. */
  readonly #cache: ExpiringCache<Session>;
  readonly #cacheTtlMs: number;
  readonly #logger: Logger;
  readonly #unsubscribe: () => void;
  readonly #stopReconnectWatch: () => void;
  /** Bumped by every eviction from outside: a read that raced with one is not cached. */
  #evictions = 0;

  constructor(connections: RedisConnections, options: RedisSessionStoreOptions = {}) {
    this.#connections = connections;
    this.#redis = connections.command;
    this.#cache = new ExpiringCache(options.cacheMaxEntries ?? 10_000);
    this.#cacheTtlMs = options.cacheTtlMs ?? 5_000;
    this.#logger = options.logger ?? createLogger('silent', 'sessions');
    this.#unsubscribe = connections.subscriptions.subscribe(SESSION_REVOKED_CHANNEL, (hash) => this.#evict(hash));
    this.#stopReconnectWatch = connections.subscriptions.onReconnect(() => this.#evictAll());
  }

  /**
   * SET key json PX (expiresAt - now). A session already expired is not stored (reads as null).
   * Waits up to `writeWaitMs` for a reconnecting Redis (see {@link RedisConnections.writable}).
   * @throws {RedisUnavailableError} when Redis cannot take it.
   */
  async create(session: Session): Promise<string> {
    const id = newSessionId();
    const ttlMs = session.expiresAt - Date.now();
    if (ttlMs <= 0) return id;
    const key = sessionKey(id);
    await this.#connections.writable();
    try {
      await this.#redis.set(sessionRedisKey(key), JSON.stringify(session), 'PX', ttlMs);
    } catch (error) {
      throw new RedisUnavailableError('storing a session', error);
    }
    this.#cache.set(key, session, Date.now() + this.#cacheTtlMs);
    return id;
  }

  /**
   * The live session, from the cache when validated within its TTL, else from Redis (GET).
   * @throws {RedisUnavailableError} when it has to ask Redis and Redis does not answer.
   */
  get(sessionId: string): Promise<Session | null> {
    if (!isWellFormedSecret(sessionId)) return Promise.resolve(null);
    const key = sessionKey(sessionId);
    const cached = this.#cache.get(key, Date.now());
    // A cache hit (nearly every request) settles without an async frame of its own.
    if (cached !== undefined) return Promise.resolve(live(cached));
    return this.#readThrough(key);
  }

  /** A cache miss: read Redis, then cache what it said unless an eviction raced with the read. */
  async #readThrough(key: string): Promise<Session | null> {
    const evictionsBefore = this.#evictions;
    const session = await this.#read(key);
    if (session === null) this.#cache.delete(key);
    else if (this.#evictions === evictionsBefore) this.#cache.set(key, session, Date.now() + this.#cacheTtlMs);
    return session === null ? null : live(session);
  }

  /**
   * MULTI: DEL the key, PUBLISH its hash on the revocation channel (every instance evicts it).
   * Waits up to `writeWaitMs` for a reconnecting Redis, like {@link create}.
   * @throws {RedisUnavailableError} when Redis cannot take it (the local entry is evicted anyway).
   */
  async destroy(sessionId: string): Promise<void> {
    if (!isWellFormedSecret(sessionId)) return;
    const key = sessionKey(sessionId);
    this.#cache.delete(key);
    await this.#connections.writable();
    try {
      const results = await this.#redis.multi().del(sessionRedisKey(key)).publish(SESSION_REVOKED_CHANNEL, key).exec();
      const failed = results?.find(([error]) => error !== null)?.[0];
      if (failed) throw failed;
    } catch (error) {
      throw new RedisUnavailableError('revoking a session', error);
    }
  }

  /** Stops listening for revocations. The connections belong to the caller. */
  async close(): Promise<void> {
    this.#unsubscribe();
    this.#stopReconnectWatch();
    this.#cache.clear();
  }

  /** GET and parse; a value that is not a session reads as null (and is logged by hash). */
  async #read(key: string): Promise<Session | null> {
    let json: string | null;
    try {
      json = await this.#redis.get(sessionRedisKey(key));
    } catch (error) {
      throw new RedisUnavailableError('reading a session', error);
    }
    if (json === null) return null;
    try {
      return JSON.parse(json) as Session;
    } catch {
      this.#logger.warn({ key }, 'unreadable session value in Redis; treated as no session');
      return null;
    }
  }

  #evict(key: string): void {
    this.#evictions++;
    this.#cache.delete(key);
  }

  #evictAll(): void {
    this.#evictions++;
    this.#cache.clear();
  }
}

function live(session: Session): Session | null {
  return session.expiresAt > Date.now() ? session : null;
}
