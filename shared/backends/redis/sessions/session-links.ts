import type { RedisClient } from '../connection/redis-client-options.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import { ExpiringCache } from '../../../expiring-cache.js';
import { newSessionId } from '../../../identity/secrets.js';
import { sessionKey, type SessionLink, type StoreReadWatch } from '../../session-store.js';
import { sessionLinkKey, sessionRedisKey } from '../redis-keys.js';

/** Links kept in each process's memory (each a hundred bytes or so). */
const CACHED_LINKS = 10_000;

/**
 * Writes the link only while its session lives, expiring with it (KEYS[1] the session's hash,
 * KEYS[2] the link's; ARGV: the session's key hash, host, CSRF token). Returns 0 when the session is gone.
 */
const LINK = `
local exp = redis.call('HGET', KEYS[1], 'exp')
if not exp then return 0 end
redis.call('HSET', KEYS[2], 'session', ARGV[1], 'host', ARGV[2], 'csrf', ARGV[3])
redis.call('PEXPIREAT', KEYS[2], exp)
return 1`;

/**
 * Split mode's host sessions (design.md §4.16): a hash per link at `gatehouse:{sessions}:link:<sha256(id)>`
 * (redis-keys.ts `sessionLinkKey`), in the sessions' slot. A link never changes, so each process
 * keeps the ones it read until its session's expiry could have come (the session is read, and
 * checked, on every use anyway).
 */
export class RedisSessionLinks {
  readonly #redis: RedisClient;
  readonly #cache = new ExpiringCache<SessionLink>(CACHED_LINKS);

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /**
   * A new link to the session stored under `key`, or null when that session is gone.
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  async create(key: string, host: string, csrfToken: string): Promise<string | null> {
    const id = newSessionId();
    let written: unknown;
    try {
      written = await this.#redis.eval(LINK, 2, sessionRedisKey(key), sessionLinkKey(sessionKey(id)), key, host, csrfToken);
    } catch (error) {
      throw new RedisUnavailableError('linking a host session', error);
    }
    return written === 1 ? id : null;
  }

  /**
   * The link of a host session id, from this process's memory when read before, else from Redis
   * (through `watch`, when given).
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  async read(linkId: string, watch?: StoreReadWatch): Promise<SessionLink | null> {
    const key = sessionKey(linkId);
    const cached = this.#cache.get(key, Date.now());
    if (cached !== undefined) return cached;
    return watch ? watch(() => this.#fetch(key)) : this.#fetch(key);
  }

  async #fetch(key: string): Promise<SessionLink | null> {
    const now = Date.now();
    let replies: [Error | null, unknown][] | null;
    try {
      replies = await this.#redis.multi().hmget(sessionLinkKey(key), 'session', 'host', 'csrf').pttl(sessionLinkKey(key)).exec();
    } catch (error) {
      throw new RedisUnavailableError('reading a host session', error);
    }
    const failed = replies === null ? new Error('transaction aborted') : (replies.find(([error]) => error !== null)?.[0] ?? null);
    if (failed !== null) throw new RedisUnavailableError('reading a host session', failed);
    const [session, host, csrf] = replies![0]![1] as (string | null)[];
    const ttl = replies![1]![1] as number;
    if (!session || !host || !csrf || ttl <= 0) return null;
    const link: SessionLink = { sessionKey: session, host, csrfToken: csrf };
    this.#cache.set(key, link, now + ttl);
    return link;
  }
}
