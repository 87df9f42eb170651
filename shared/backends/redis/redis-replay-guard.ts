import type { RedisConnections } from './connection/redis-connections.js';
import { RedisUnavailableError } from './connection/redis-errors.js';
import { usedTokenIdKey } from './redis-keys.js';
import { usedIdKey, type ReplayGuard } from '../replay-guard.js';

/** Split-mode {@link ReplayGuard}: `SET gatehouse:used-jti:<hash> 1 NX PXAT until`, one key per id. */
export class RedisReplayGuard implements ReplayGuard {
  readonly #connections: RedisConnections;

  constructor(connections: RedisConnections) {
    this.#connections = connections;
  }

  /** @throws {RedisUnavailableError} when Redis does not answer. */
  async firstUse(id: string, until: number): Promise<boolean> {
    try {
      return (await this.#connections.command.set(usedTokenIdKey(usedIdKey(id)), '1', 'PXAT', Math.max(until, Date.now() + 1), 'NX')) === 'OK';
    } catch (error) {
      throw new RedisUnavailableError('recording a used token id', error);
    }
  }
}
