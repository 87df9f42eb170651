import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../connection/redis-client-options.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import { sessionRefreshLockKey } from '../redis-keys.js';

/** Releases a refresh lock only when it is still the caller's (its token). */
const UNLOCK = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * The locks that keep refreshes of a session at the provider to one at a time across every process
 * and host (design.md §4.12): a key per session handle (`sessionRefreshLockKey`), taken with
 * `SET NX PX` and holding a random token, so only its holder releases it; a lock left behind
 * lapses with its TTL.
 */
export class RefreshLocks {
  readonly #redis: RedisClient;
  /** The tokens of the locks this instance holds, by handle. */
  readonly #tokens = new Map<string, string>();

  constructor(redis: RedisClient) {
    this.#redis = redis;
  }

  /**
   * Takes the lock on refreshing `handle` for `ttlMs` ms.
   * @returns false when another holds it.
   * @throws {RedisUnavailableError} when Redis does not answer.
   */
  async take(handle: string, ttlMs: number): Promise<boolean> {
    const token = randomBytes(16).toString('base64url');
    let taken: string | null;
    try {
      taken = await this.#redis.set(sessionRefreshLockKey(handle), token, 'PX', ttlMs, 'NX');
    } catch (error) {
      throw new RedisUnavailableError('locking a session refresh', error);
    }
    if (taken === 'OK') this.#tokens.set(handle, token);
    return taken === 'OK';
  }

  /** Releases the lock on `handle` when this instance holds it; never rejects. */
  async release(handle: string): Promise<void> {
    const token = this.#tokens.get(handle);
    if (token === undefined) return;
    this.#tokens.delete(handle);
    // A lock left behind lapses with its TTL; releasing it early is only a courtesy.
    await this.#redis.eval(UNLOCK, 1, sessionRefreshLockKey(handle), token).catch(() => undefined);
  }
}
