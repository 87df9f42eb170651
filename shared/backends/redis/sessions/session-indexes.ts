import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../connection/redis-client-options.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import { SESSIONS_INDEX_KEY, sessionsByEmailKey, sessionsBySidKey, sessionsBySubKey } from '../redis-keys.js';
import { emailKey, liveSession, type SessionQuery, type SessionSelector } from '../../session-store.js';
import type { Session } from '../../../types.js';

/**
 * The sorted sets that find Redis sessions without a scan (redis-keys.ts): everyone's, a
 * subject's, a verified email's and a provider session's (`sid`), each holding session handles
 * scored by their expiry (epoch ms). {@link indexesOf} and {@link addToIndex} are what a write puts
 * in them; {@link SessionIndexes} reads them back into sessions and keeps them clean: expired
 * members leave on each read, and so do members whose session is gone (revoked elsewhere, idle).
 */
export class SessionIndexes {
  readonly #redis: RedisClient;
  readonly #byHandle: (handle: string) => Promise<Session | null>;

  /** @param byHandle the store's read of a session by handle (null when gone). */
  constructor(redis: RedisClient, byHandle: (handle: string) => Promise<Session | null>) {
    this.#redis = redis;
    this.#byHandle = byHandle;
  }

  /**
   * A page of live sessions, newest first, and how many match in all. A user's sessions are few:
   * all of them are read and paged here. Everyone's are paged in Redis (ZREVRANGE), newest expiry
   * first, which is newest first under one SESSION_TTL.
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  async list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    if (query.user !== undefined) {
      const sessions = await this.#userSessions(query.user);
      return { sessions: sessions.slice(query.offset, query.offset + query.limit), total: sessions.length };
    }
    return this.#pageEveryone(query);
  }

  /**
   * Every live session of a subject, or of a provider session, newest expiry first.
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  find(selector: SessionSelector): Promise<Session[]> {
    return this.#liveMembers('sub' in selector ? sessionsBySubKey(selector.sub) : sessionsBySidKey(selector.sid));
  }

  /**
   * Moves a session from the index of its email `before` to that of its email `after`.
   * @throws {RedisUnavailableError} when Redis cannot take it.
   */
  async reindexEmail(before: Session, after: Session): Promise<void> {
    const tx = this.#redis.multi();
    if (emailKey(before) !== '') tx.zrem(sessionsByEmailKey(emailKey(before)), before.handle);
    if (emailKey(after) !== '') addToIndex(tx, sessionsByEmailKey(emailKey(after)), after);
    try {
      const results = await tx.exec();
      const failed = results?.find(([error]) => error !== null)?.[0];
      if (failed) throw failed;
    } catch (error) {
      throw new RedisUnavailableError('indexing a session', error);
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
    const found = await Promise.all(handles.map((handle) => this.#byHandle(handle)));
    const sessions: Session[] = [];
    const gone: string[] = [];
    found.forEach((session, i) => (session !== null && liveSession(session) ? sessions.push(session) : gone.push(handles[i]!)));
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
}

/** The sorted sets a session's handle is in (keys of redis-keys.ts). */
export function indexesOf(session: Session): string[] {
  const indexes = [SESSIONS_INDEX_KEY, sessionsBySubKey(session.user.sub)];
  if (emailKey(session) !== '') indexes.push(sessionsByEmailKey(emailKey(session)));
  if (session.sid !== undefined) indexes.push(sessionsBySidKey(session.sid));
  return indexes;
}

/**
 * Queues on `tx` a ZADD of the session's handle to `index`, scored by its expiry; a per-user index
 * expires with its last session (NX sets a first expiry, GT only ever extends it). The everyone
 * index never expires (pruned on read).
 */
export function addToIndex(tx: ChainableCommander, index: string, session: Session): void {
  tx.zadd(index, session.expiresAt, session.handle);
  if (index !== SESSIONS_INDEX_KEY) tx.pexpireat(index, session.expiresAt, 'NX').pexpireat(index, session.expiresAt, 'GT');
}
