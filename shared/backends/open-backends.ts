import type { Backends, SqliteStorage } from './backends.js';
import type { Config } from '../config/config.js';
import { openEmbeddedBackends } from './embedded/embedded-backends.js';
import type { Logger } from '../logger.js';
import { openRedisBackends } from './redis/redis-backends.js';

/**
 * The backends a process uses: Redis when REDIS_URL or REDIS_SENTINELS is set, else embedded. `storage` is the admin
 * plane's SQLite side, when this process has it: the embedded backends need it (sessions, and
 * access-log records stored in-process); with Redis it makes this process the stream's consumer.
 * A proxy process passes none. `redis.startupTimeoutMs` is how long to wait for Redis first (see
 * RedisBackendsOptions; 0: not at all, the process starts not ready and connects when it can;
 * every Gatehouse process passes 0, the default wait is for tests and tools).
 * @throws when Redis is configured but does not answer within a non-zero `redis.startupTimeoutMs`,
 *   or when neither Redis nor a storage is given.
 */
export async function openBackends(config: Config, logger: Logger, storage?: SqliteStorage, redis: { startupTimeoutMs?: number } = {}): Promise<Backends> {
  if (config.redis) return openRedisBackends(config, logger, { storeAccessLogs: storage?.storeAccessLogs, ...redis });
  if (!storage) throw new Error('the embedded backends need the SQLite database; set REDIS_URL for split mode');
  return openEmbeddedBackends(config, storage, logger);
}
