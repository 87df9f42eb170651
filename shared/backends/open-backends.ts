import type { Database } from 'better-sqlite3';
import type { Backends } from './backends.js';
import type { Config } from '../config.js';
import { openEmbeddedBackends } from './embedded/embedded-backends.js';
import type { Logger } from '../logger.js';
import { openRedisBackends } from './redis/redis-backends.js';

/**
 * The backends a process uses: Redis when REDIS_URL is set, else embedded (which needs the
 * gateway's SQLite database).
 * @throws when REDIS_URL is set but Redis does not answer at start, or when neither REDIS_URL nor
 *   a database is available.
 */
export async function openBackends(config: Config, db: Database | undefined, logger: Logger): Promise<Backends> {
  if (config.redisUrl) return openRedisBackends(config, logger);
  if (!db) throw new Error('the embedded backends need the SQLite database; set REDIS_URL for split mode');
  return openEmbeddedBackends(config, db, logger);
}
