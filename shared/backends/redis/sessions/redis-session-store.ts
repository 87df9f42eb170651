import { randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../connection/redis-client-options.js';
import { ReplicaConfirmation } from '../connection/replica-confirmation.js';
import { createLogger, type Logger } from '../../../logger.js';
import { isWellFormedHandle, isWellFormedSecret, newSessionId } from '../../../identity/secrets.js';
import { emailKey, keepIdentity, sessionKey, type SessionQuery, type SessionSelector, type SessionStore } from '../../session-store.js';
import type { Session } from '../../../types.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import {
  SESSION_REVALIDATE_CHANNEL,
  SESSION_REVOKED_CHANNEL,
  SESSIONS_INDEX_KEY,
  sessionHandleKey,
  sessionRedisKey,
  sessionRefreshLockKey,
  sessionsByEmailKey,
  sessionsBySidKey,
  sessionsBySubKey,
} from '../redis-keys.js';
import { ExpiringCache } from '../../../expiring-cache.js';

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
/** Releases a refresh lock only when it is still the caller's (its token). */
const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Split-mode {@link SessionStore} (design.md §2.1). Each session is a hash at
 * `gatehouse:{sessions}:session:<sha256(id)>` expiring with it, a handle key pointing at that hash, and its handle
 * in the sorted-set indexes of redis-keys.ts (everyone's, its subject's, its email's, its `sid`'s),
 * so a user's sessions are found without a scan. Reads go through a small local
 * {@link ExpiringCache} so the data plane does not hit Redis per request; only live sessions are
 * cached (a session created elsewhere is visible at once). Ending or changing a session PUBLISHes
 * its key hash on `gatehouse:session-revoked`; every instance subscribes and evicts that entry, and
 * after the subscriber reconnects (messages may have been missed) the whole cache is dropped.
 *
 * Faults: while Redis is unreachable `get` serves sessions validated within the cache TTL and
 * rejects for any other (never null for "cannot tell"), so protected routes fail closed.
 * Every rejection is a {@link RedisUnavailableError}, which never quotes the command's arguments.
 */
export class RedisSessionStore implements SessionStore {
  readonly #connections: RedisConnections;
  readonly #redis: RedisClient;
  /** Sessions Redis confirmed, each served for `cacheTtlMs` after that. */
  readonly #cache: ExpiringCache<Session>;
  readonly #cacheTtlMs: number;
  readonly #idleTimeoutMs: number | undefined;
  readonly #logger: Logger;
  readonly #unsubscribe: () => void;
  readonly #stopReconnectWatch: () => void;
  /** The tokens of the refresh locks this instance holds, by handle. */
  readonly #lockTokens = new Map<string, string>();
  /** Bumped by every eviction from outside: a read that raced with one is not cached. */
  #evictions = 0;
  /** New and ended sessions, written on a connection of their own and confirmed by a replica. */
  readonly #confirmedWrites: ReplicaConfirmation;

  constructor(connections: RedisConnections, options: RedisSessionStoreOptions = {}) {
    this.#connections = connections;
    this.#redis = connections.command;
    this.#confirmedWrites = new ReplicaConfirmation(connections, 'session-writes');
    this.#cache = new ExpiringCache(options.cacheMaxEntries ?? 10_000);
    this.#cacheTtlMs = options.cacheTtlMs ?? 5_000;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#logger = options.logger ?? createLogger('silent', 'sessions');
    this.#unsubscribe = connections.subscriptions.subscribe(SESSION_REVOKED_CHANNEL, (hash) => this.#evict(hash));
    this.#stopReconnectWatch = connections.subscriptions.onReconnect(() => this.#evictAll());
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
    this.#cache.set(key, session, Date.now() + this.#cacheTtlMs);
    return id;
  }

  /**
   * The live session, from the cache when validated within its TTL (unless `fresh`), else from
   * Redis (HMGET).
   * @throws {RedisUnavailableError} when it has to ask Redis and Redis does not answer.
   */
  get(sessionId: string, options: { fresh?: boolean } = {}): Promise<Session | null> {
    if (!isWellFormedSecret(sessionId)) return Promise.resolve(null);
    const key = sessionKey(sessionId);
    const cached = options.fresh ? undefined : this.#cache.get(key, Date.now());
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
    if (!isWellFormedSecret(sessionId)) return;
    const key = sessionKey(sessionId);
    try {
      await this.#redis.eval(TOUCH, 1, sessionRedisKey(key), at, this.#idleTimeoutMs ?? '');
    } catch (error) {
      throw new RedisUnavailableError('recording a session use', error);
    }
    const cached = this.#cache.get(key, at);
    if (cached !== undefined) cached.lastSeenAt = Math.max(cached.lastSeenAt, at);
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
    this.#evict(key);
    if (written === 1 && emailKey(next) !== emailKey(current)) await this.#reindexEmail(current, next);
    return written === 1;
  }

  /**
   * A user's sessions are few: all of them are read and paged here. Everyone's are paged in
   * Redis (ZREVRANGE), newest expiry first, which is newest first under one SESSION_TTL.
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  async list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    if (query.user !== undefined) {
      const sessions = await this.#userSessions(query.user);
      return { sessions: sessions.slice(query.offset, query.offset + query.limit), total: sessions.length };
    }
    return this.#pageEveryone(query);
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async find(selector: SessionSelector): Promise<Session[]> {
    return this.#liveMembers('sub' in selector ? sessionsBySubKey(selector.sub) : sessionsBySidKey(selector.sid));
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
  async lockRefresh(handle: string, ttlMs: number): Promise<boolean> {
    const token = randomBytes(16).toString('base64url');
    let taken: string | null;
    try {
      taken = await this.#redis.set(sessionRefreshLockKey(handle), token, 'PX', ttlMs, 'NX');
    } catch (error) {
      throw new RedisUnavailableError('locking a session refresh', error);
    }
    if (taken === 'OK') this.#lockTokens.set(handle, token);
    return taken === 'OK';
  }

  async unlockRefresh(handle: string): Promise<void> {
    const token = this.#lockTokens.get(handle);
    if (token === undefined) return;
    this.#lockTokens.delete(handle);
    // A lock left behind lapses with its TTL; releasing it early is only a courtesy.
    await this.#redis.eval(UNLOCK, 1, sessionRefreshLockKey(handle), token).catch(() => undefined);
  }

  /** Stops listening for revocations. The connections belong to the caller. */
  async close(): Promise<void> {
    this.#unsubscribe();
    this.#stopReconnectWatch();
    this.#cache.clear();
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

  async #exec(tx: ChainableCommander, doing: string): Promise<void> {
    try {
      const results = await tx.exec();
      const failed = results?.find(([error]) => error !== null)?.[0];
      if (failed) throw failed;
    } catch (error) {
      throw new RedisUnavailableError(doing, error);
    }
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

  /** The live sessions whose handles an index holds, newest expiry first; stale members are dropped. */
  async #liveMembers(index: string): Promise<Session[]> {
    let handles: string[];
    try {
      await this.#redis.zremrangebyscore(index, '-inf', Date.now());
      handles = await this.#redis.zrevrange(index, 0, -1);
    } catch (error) {
      throw new RedisUnavailableError('listing sessions', error);
    }
    return this.#sessionsOf(index, handles);
  }

  /** The sessions of `handles`, in order; those gone (revoked elsewhere, idle) leave `index`. */
  async #sessionsOf(index: string, handles: readonly string[]): Promise<Session[]> {
    // Read together: ioredis sends them at once, two round trips for a page rather than two per session.
    const found = await Promise.all(handles.map((handle) => this.byHandle(handle)));
    const sessions: Session[] = [];
    const gone: string[] = [];
    found.forEach((session, i) => (session !== null && live(session) ? sessions.push(session) : gone.push(handles[i]!)));
    if (gone.length > 0) await this.#redis.zrem(index, ...gone).catch(() => undefined);
    return sessions;
  }

  /** A subject's sessions and a verified email's, once each, newest first. */
  async #userSessions(user: string): Promise<Session[]> {
    const [bySub, byEmail] = await Promise.all([this.#liveMembers(sessionsBySubKey(user)), this.#liveMembers(sessionsByEmailKey(user.toLowerCase()))]);
    const byHandle = new Map([...bySub, ...byEmail].map((session) => [session.handle, session]));
    return [...byHandle.values()].sort((a, b) => b.createdAt - a.createdAt);
  }

  async #pageEveryone(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    // Members found gone are dropped from the index and the page read again (a few times at most).
    for (let attempt = 0; ; attempt++) {
      let handles: string[];
      let total: number;
      try {
        await this.#redis.zremrangebyscore(SESSIONS_INDEX_KEY, '-inf', Date.now());
        [handles, total] = await Promise.all([
          this.#redis.zrevrange(SESSIONS_INDEX_KEY, query.offset, query.offset + query.limit - 1),
          this.#redis.zcard(SESSIONS_INDEX_KEY),
        ]);
      } catch (error) {
        throw new RedisUnavailableError('listing sessions', error);
      }
      const sessions = await this.#sessionsOf(SESSIONS_INDEX_KEY, handles);
      if (sessions.length === handles.length || attempt === 3) return { sessions, total: total - (handles.length - sessions.length) };
    }
  }

  async #reindexEmail(before: Session, after: Session): Promise<void> {
    const tx = this.#redis.multi();
    if (emailKey(before) !== '') tx.zrem(sessionsByEmailKey(emailKey(before)), before.handle);
    if (emailKey(after) !== '') addToIndex(tx, sessionsByEmailKey(emailKey(after)), after);
    await this.#exec(tx, 'indexing a session');
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

/** The sorted sets a session's handle is in. */
function indexesOf(session: Session): string[] {
  const indexes = [SESSIONS_INDEX_KEY, sessionsBySubKey(session.user.sub)];
  if (emailKey(session) !== '') indexes.push(sessionsByEmailKey(emailKey(session)));
  if (session.sid !== undefined) indexes.push(sessionsBySidKey(session.sid));
  return indexes;
}

/**
 * ZADD the handle scored by its expiry; a per-user index expires with its last session (NX sets
 * a first expiry, GT only ever extends it). The everyone index never expires (pruned on read).
 */
function addToIndex(tx: ChainableCommander, index: string, session: Session): void {
  tx.zadd(index, session.expiresAt, session.handle);
  if (index !== SESSIONS_INDEX_KEY) tx.pexpireat(index, session.expiresAt, 'NX').pexpireat(index, session.expiresAt, 'GT');
}

function live(session: Session): Session | null {
  return session.expiresAt > Date.now() ? session : null;
}
