import type { RedisClient } from '../connection/redis-client-options.js';
import { ReplicaConfirmation } from '../connection/replica-confirmation.js';
import { createLogger, type Logger } from '../../../logger.js';
import { isWellFormedHandle, isWellFormedSecret, newSessionId } from '../../../identity/secrets.js';
import { emailKey, keepIdentity, liveSession, sessionKey, type SessionLink, type SessionQuery, type SessionReadOptions, type StoreReadWatch, type SessionSelector, type SessionStore } from '../../session-store.js';
import type { Session } from '../../../types.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import { SESSION_REVALIDATE_CHANNEL, SESSION_REVOKED_CHANNEL, SESSIONS_INDEX_KEY, sessionHandleKey, sessionRedisKey } from '../redis-keys.js';
import { ConfirmedSessionCache } from './confirmed-session-cache.js';
import { RefreshLocks } from './refresh-locks.js';
import { RedisSessionLinks } from './session-links.js';
import { addToIndex, indexesOf, SessionIndexes } from './session-indexes.js';

export interface RedisSessionStoreOptions {
  /**
   * How long a session confirmed by Redis is served from the local cache, in ms (default 5,000).
   * It is also how long a session stays usable while Redis is unreachable. Revocations evict at
   * once; this only bounds staleness when a revocation message is lost.
   */
  cacheTtlMs?: number;
  /** Most sessions cached at once (default 10,000); the least recently validated goes first. */
  cacheMaxEntries?: number;
  /** SESSION_IDLE_TIMEOUT in ms: a session unused this long expires in Redis; undefined: never. */
  idleTimeoutMs?: number;
  logger?: Logger;
}

/** Records a use: `seen` = ARGV[1], and with an idle timeout (ARGV[2] ms) the TTL, never past `exp`. */
const TOUCH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local at = tonumber(ARGV[1])
if tonumber(redis.call('HGET', KEYS[1], 'seen') or '0') < at then redis.call('HSET', KEYS[1], 'seen', ARGV[1]) end
if ARGV[2] ~= '' then
  local left = tonumber(redis.call('HGET', KEYS[1], 'exp')) - at
  redis.call('PEXPIRE', KEYS[1], math.max(1, math.min(tonumber(ARGV[2]), left)))
end
return 1`;
/** Writes `data` = ARGV[1] only while the session lives, and tells every worker to re-read it. */
const UPDATE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'data', ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1`;

/**
 * Split-mode {@link SessionStore} (design.md §2.1). Each session is a hash at
 * `gatehouse:{sessions}:session:<sha256(id)>` expiring with it, a handle key pointing at that hash,
 * and its handle in the sorted-set indexes of redis-keys.ts (session-indexes.ts), so a user's
 * sessions are found without a scan. Reads go through a small local cache
 * (confirmed-session-cache.ts) so the data plane does not hit Redis per request; only live
 * sessions are cached (a session created elsewhere is visible at once). Ending or changing a
 * session PUBLISHes its key hash on `gatehouse:session-revoked`, on which every instance's cache
 * evicts it. Refreshes at the provider are locked per session (refresh-locks.ts).
 *
 * Faults: while Redis is unreachable `get` serves sessions validated within the cache TTL and
 * rejects for any other (never null for "cannot tell"), so protected routes fail closed.
 * Every rejection is a {@link RedisUnavailableError}, which never quotes the command's arguments.
 */
export class RedisSessionStore implements SessionStore {
  readonly #connections: RedisConnections;
  readonly #redis: RedisClient;
  /** Sessions Redis confirmed, each served for `cacheTtlMs` after that. */
  readonly #cache: ConfirmedSessionCache;
  readonly #indexes: SessionIndexes;
  readonly #refreshLocks: RefreshLocks;
  readonly #links: RedisSessionLinks;
  readonly #idleTimeoutMs: number | undefined;
  readonly #logger: Logger;
  /** New and ended sessions, written on a connection of their own and confirmed by a replica. */
  readonly #confirmedWrites: ReplicaConfirmation;

  constructor(connections: RedisConnections, options: RedisSessionStoreOptions = {}) {
    this.#connections = connections;
    this.#redis = connections.command;
    this.#confirmedWrites = new ReplicaConfirmation(connections, 'session-writes');
    this.#cache = new ConfirmedSessionCache(connections.subscriptions, options.cacheTtlMs ?? 5_000, options.cacheMaxEntries ?? 10_000);
    this.#indexes = new SessionIndexes(this.#redis, (handle) => this.byHandle(handle));
    this.#refreshLocks = new RefreshLocks(this.#redis);
    this.#links = new RedisSessionLinks(this.#redis);
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#logger = options.logger ?? createLogger('silent', 'sessions');
  }

  /**
   * MULTI: the session's hash, its handle key and its index entries, all expiring with it,
   * confirmed by a replica when the primary has any ({@link ReplicaConfirmation}), so a sign-in
   * never completes with a session a failover could lose. A session already expired is not stored
   * (reads as null). Waits up to `writeWaitMs` for a reconnecting Redis (see
   * {@link RedisConnections.writable}).
   * @throws {RedisUnavailableError} when Redis cannot take it, or no replica confirmed it within
   *   a second.
   */
  async create(session: Session): Promise<string> {
    const id = newSessionId();
    if (session.expiresAt <= Date.now()) return id;
    const key = sessionKey(id);
    const store = (client: RedisClient) => {
      const tx = client
        .multi()
        .hset(sessionRedisKey(key), { data: JSON.stringify(session), seen: session.lastSeenAt, exp: session.expiresAt })
        .pexpireat(sessionRedisKey(key), session.expiresAt);
      if (this.#idleTimeoutMs !== undefined) tx.pexpire(sessionRedisKey(key), Math.min(this.#idleTimeoutMs, session.expiresAt - Date.now()));
      tx.set(sessionHandleKey(session.handle), key, 'PXAT', session.expiresAt);
      for (const index of indexesOf(session)) addToIndex(tx, index, session);
      return tx;
    };
    await this.#confirmedWrites.write(store, sessionRedisKey(key), 'storing a session');
    this.#cache.confirmed(key, session);
    return id;
  }

  /**
   * The live session, from the cache when validated within its TTL (unless `fresh`), else from
   * Redis (HMGET).
   * @throws {RedisUnavailableError} when it has to ask Redis and Redis does not answer.
   */
  get(sessionId: string, options: SessionReadOptions = {}): Promise<Session | null> {
    return isWellFormedSecret(sessionId) ? this.getByKey(sessionKey(sessionId), options) : Promise.resolve(null);
  }

  /** See {@link get}. @throws {RedisUnavailableError} when it has to ask Redis and Redis does not answer. */
  getByKey(key: string, options: SessionReadOptions = {}): Promise<Session | null> {
    const cached = options.fresh ? undefined : this.#cache.get(key, Date.now());
    // A cache hit (nearly every request) settles without an async frame of its own.
    if (cached !== undefined) return Promise.resolve(liveSession(cached));
    return options.watch ? options.watch(() => this.#readThrough(key)) : this.#readThrough(key);
  }

  /** A cache miss: read Redis, then cache what it said unless an eviction raced with the read. */
  async #readThrough(key: string): Promise<Session | null> {
    const session = await this.#cache.readThrough(key, (k) => this.#read(k));
    return session === null ? null : liveSession(session);
  }

  /**
   * Ends the session of a cookie value (see {@link revoke}). Waits up to `writeWaitMs` for a
   * reconnecting Redis, like {@link create}.
   * @throws {RedisUnavailableError} when Redis cannot take it (the local entry is evicted anyway).
   */
  async destroy(sessionId: string): Promise<void> {
    if (!isWellFormedSecret(sessionId)) return;
    const key = sessionKey(sessionId);
    this.#cache.delete(key);
    await this.#connections.writable();
    const session = await this.#read(key);
    await this.#end(key, session);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async touch(sessionId: string, at: number): Promise<void> {
    if (isWellFormedSecret(sessionId)) await this.touchByKey(sessionKey(sessionId), at);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async touchByKey(key: string, at: number): Promise<void> {
    try {
      await this.#redis.eval(TOUCH, 1, sessionRedisKey(key), at, this.#idleTimeoutMs ?? '');
    } catch (error) {
      throw new RedisUnavailableError('recording a session use', error);
    }
    const cached = this.#cache.get(key, at);
    if (cached !== undefined) cached.lastSeenAt = Math.max(cached.lastSeenAt, at);
  }

  /** See {@link RedisSessionLinks.create}. @throws {RedisUnavailableError} when Redis does not answer. */
  async link(handle: string, host: string, csrfToken: string): Promise<string | null> {
    const key = await this.#keyOf(handle);
    return key === null ? null : this.#links.create(key, host, csrfToken);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer (and the link was not read before). */
  getLink(linkId: string, watch?: StoreReadWatch): Promise<SessionLink | null> {
    return isWellFormedSecret(linkId) ? this.#links.read(linkId, watch) : Promise.resolve(null);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async byHandle(handle: string): Promise<Session | null> {
    const key = await this.#keyOf(handle);
    return key === null ? null : this.#read(key);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async update(handle: string, change: (current: Session) => Session): Promise<boolean> {
    const key = await this.#keyOf(handle);
    const current = key === null ? null : await this.#read(key);
    if (key === null || current === null) return false;
    const next = keepIdentity(current, change(current));
    let written: unknown;
    try {
      written = await this.#redis.eval(UPDATE, 1, sessionRedisKey(key), JSON.stringify(next), SESSION_REVOKED_CHANNEL, key);
    } catch (error) {
      throw new RedisUnavailableError('updating a session', error);
    }
    this.#cache.evict(key);
    if (written === 1 && emailKey(next) !== emailKey(current)) await this.#indexes.reindexEmail(current, next);
    return written === 1;
  }

  /** See {@link SessionIndexes.list}. @throws {RedisUnavailableError} when Redis does not answer. */
  list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    return this.#indexes.list(query);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  find(selector: SessionSelector): Promise<Session[]> {
    return this.#indexes.find(selector);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async revoke(handles: readonly string[]): Promise<number> {
    await this.#connections.writable();
    let live = 0;
    for (const handle of handles) {
      const key = await this.#keyOf(handle);
      if (key === null) continue;
      const session = await this.#read(key);
      await this.#end(key, session, handle);
      if (session !== null) live++;
    }
    return live;
  }

  requestRevalidation(handle: string): void {
    this.#redis.publish(SESSION_REVALIDATE_CHANNEL, handle).catch((error: unknown) => {
      this.#logger.warn({ err: new RedisUnavailableError('asking for a session check', error) }, 'session check not asked; a later request asks again');
    });
  }

  onRevalidationRequest(listener: (handle: string) => void): () => void {
    return this.#connections.subscriptions.subscribe(SESSION_REVALIDATE_CHANNEL, listener);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  lockRefresh(handle: string, ttlMs: number): Promise<boolean> {
    return this.#refreshLocks.take(handle, ttlMs);
  }

  unlockRefresh(handle: string): Promise<void> {
    return this.#refreshLocks.release(handle);
  }

  /** Stops listening for revocations. The connections belong to the caller. */
  async close(): Promise<void> {
    this.#cache.close();
  }

  /**
   * MULTI: DEL the hash and handle key, drop the index entries, PUBLISH the key hash; confirmed by
   * a replica like {@link create}, so a failover cannot bring an ended session back. Of a session
   * already gone (idle) only the handle's key and the everyone index are known; its other index
   * entries leave on their next read.
   */
  async #end(key: string, session: Session | null, handle = session?.handle): Promise<void> {
    this.#cache.delete(key);
    const end = (client: RedisClient) => {
      const tx = client.multi().del(sessionRedisKey(key));
      if (handle !== undefined) tx.del(sessionHandleKey(handle)).zrem(SESSIONS_INDEX_KEY, handle);
      if (session !== null) for (const index of indexesOf(session)) tx.zrem(index, session.handle);
      return tx.publish(SESSION_REVOKED_CHANNEL, key);
    };
    await this.#confirmedWrites.write(end, sessionRedisKey(key), 'revoking a session');
  }

  async #keyOf(handle: string): Promise<string | null> {
    if (!isWellFormedHandle(handle)) return null;
    try {
      return await this.#redis.get(sessionHandleKey(handle));
    } catch (error) {
      throw new RedisUnavailableError('finding a session', error);
    }
  }

  /** HMGET and parse; a value that is not a session reads as null (and is logged by hash). */
  async #read(key: string): Promise<Session | null> {
    let data: string | null | undefined;
    let seen: string | null | undefined;
    try {
      [data, seen] = await this.#redis.hmget(sessionRedisKey(key), 'data', 'seen');
    } catch (error) {
      throw new RedisUnavailableError('reading a session', error);
    }
    if (data == null) return null;
    try {
      const session = JSON.parse(data) as Session;
      session.lastSeenAt = Math.max(session.lastSeenAt, Number(seen) || 0);
      return session;
    } catch {
      this.#logger.warn({ key }, 'unreadable session value in Redis; treated as no session');
      return null;
    }
  }
}
