import type { AccessLogBatch } from '../../shared/backends/access-log-batch.js';
import type { Backends } from '../../shared/backends/backends.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/logger.js';
import { openAccessLogReads, type AccessLogReads } from '../access-log/reading/access-log-reads.js';
import { openAccessLogWriter, type AccessLogWriter } from '../access-log/writing/access-log-writer.js';
import { accessLogDirOf } from '../access-log/day-files.js';
import { diskBudgetFor } from '../access-log/writing/disk-budget.js';
import { openDatabase, type Database } from '../database.js';
import { closeInOrder } from '../../shared/close-in-order.js';
import { SpanKind } from '../../shared/tracing/span-export.js';
import { AdminTracing, withinSpan } from '../tracing/admin-tracing.js';

/**
 * What a process with the admin plane runs on (the embedded gateway, the admin process): the
 * SQLite database, the access log's writer and reader threads, and the backends, which deliver
 * every access-log record to that writer (embedded: the data plane's sink stores into it; Redis:
 * a stream consumer does).
 */
export interface AdminStorage {
  readonly db: Database;
  readonly backends: Backends;
  /** Stores access-log batches into the day files beside the database (and exports them). */
  readonly accessLogWriter: AccessLogWriter;
  /** Reads pages of the access log for the API and console. */
  readonly accessLogReads: AccessLogReads;
  /**
   * Closes the backends (the access-log sink ships what it holds, the stream consumer stops,
   * Redis closes), then the writer once the batches handed to it are stored, the reader, then the
   * database.
   * Call once the planes take no more requests.
   */
  close(): Promise<void>;
}

/**
 * Opens the database at DATABASE_PATH (migrating it), the access log's threads (its day files in
 * the folder beside it, see day-files.ts), then the backends given both: the only order in which
 * the access-log pipeline has somewhere to go. With Redis it does not wait for Redis to answer:
 * a process manager would restart a process that gave up into a loop, so the backends connect
 * when they can (retrying with backoff, forever) and their readiness checks say not ready until
 * then; the stream consumer waits for Redis by itself. With `tracing` on, a store call that took a
 * batch is a root span `access-log store` when the sampler keeps it (design.md §3.10).
 * @throws when the database cannot be opened, or the Redis settings are malformed.
 */
export async function openAdminStorage(config: Config, logger: Logger, tracing = AdminTracing.OFF): Promise<AdminStorage> {
  const db = openDatabase(config.databasePath);
  const dir = accessLogDirOf(config.databasePath);
  const budget = diskBudgetFor(dir, config.accessLogMaxBytes);
  const writer = openAccessLogWriter(
    { databasePath: config.databasePath, dir, retentionDays: config.accessLogRetentionDays, budget, export: config.accessLogExport && { ...config.accessLogExport, url: config.accessLogExport.url.href } },
    (notice) => logger[notice.level](notice.fields, notice.message),
  );
  const reads = openAccessLogReads(dir);
  const storeAccessLogs = (batch: AccessLogBatch) => withinSpan(tracing.startRoot('access-log store', SpanKind.INTERNAL, { 'gatehouse.access_log.records': batch.count }), () => writer.store(batch));
  const backends = await openBackends(config, logger, { db, storeAccessLogs }, { startupTimeoutMs: 0 });
  return {
    db,
    backends,
    accessLogWriter: writer,
    accessLogReads: reads,
    close: () => closeInOrder(backends, writer, reads, db),
  };
}
