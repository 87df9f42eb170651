import type { Backends } from '../../shared/backends/backends.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { openAccessLogWriter } from '../access-log/access-log-writer.js';
import { openDatabase, type Database } from '../database.js';
import { closeInOrder } from '../../shared/close-in-order.js';

/**
 * What a process with the admin plane runs on (the embedded gateway, the admin process): the
 * SQLite database, its access-log writer thread, and the backends, which deliver every access-log
 * record to that writer (embedded: the data plane's sink stores into it; Redis: a stream consumer
 * does).
 */
export interface AdminStorage {
  readonly db: Database;
  readonly backends: Backends;
  /**
   * Closes the backends (the access-log sink ships what it holds, the stream consumer stops,
   * Redis closes), then the writer once the batches handed to it are stored, then the database.
   * Call once the planes take no more requests.
   */
  close(): Promise<void>;
}

/**
 * Opens the database at DATABASE_PATH (migrating it), the access-log writer, then the backends
 * given both: the only order in which the access-log pipeline has somewhere to go.
 * @throws when the database cannot be opened, or Redis (REDIS_URL) does not answer at start.
 */
export async function openAdminStorage(config: Config, logger: Logger): Promise<AdminStorage> {
  const db = openDatabase(config.databasePath);
  const writer = openAccessLogWriter(db, config.databasePath);
  const backends = await openBackends(config, logger, { db, storeAccessLogs: (batch) => writer.store(batch) });
  return {
    db,
    backends,
    close: () => closeInOrder(backends, writer, db),
  };
}
