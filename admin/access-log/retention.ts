import type { Database } from 'better-sqlite3';
import type { Config } from '../../shared/config.js';
import type { Logger } from '../../shared/logger.js';
import { compactRollups, COMPACT_ROLLUPS_AFTER_DAYS } from './rollup-compaction.js';

/** Rows deleted per transaction, so the writer (and readers) never wait long. */
export const RETENTION_BATCH_SIZE = 5_000;
/** How long traffic rollups are kept (per minute for the first days, then per hour: see rollup-compaction.ts). */
export const ROLLUP_RETENTION_DAYS = 400;
/** How often the admin process prunes. */
export const RETENTION_INTERVAL_MS = 10 * 60_000;
/** The first run, a minute after start (not at once, to keep start-up quick). */
const FIRST_RUN_MS = 60_000;

const DAY_MS = 86_400_000;

export interface PruneOptions {
  /** Raw access-log records whose timestamp is older than this many days are deleted. */
  accessLogDays: number;
  now?: number;
  batchSize?: number;
  /** Checked before each batch; true stops the run (the process is closing). */
  stopped?: () => boolean;
}

/**
 * Deletes expired raw access-log records and traffic rollups, in transactions of at most
 * `batchSize` rows, yielding to the event loop between them.
 *
 * Access-log records are deleted oldest first by arrival (`id`) up to the first record that is
 * not expired: that walks the table's own rowid order instead of needing an index on timestamp.
 * A record that arrived late with an old timestamp (a stream re-delivered after an outage) is
 * deleted once the records before it have expired too.
 * @returns how many rows of each kind were deleted.
 */
export async function prune(db: Database, options: PruneOptions): Promise<{ accessLogs: number; rollups: number }> {
  const now = options.now ?? Date.now();
  const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
  const stopped = () => !db.open || (options.stopped?.() ?? false);
  const logCutoff = now - options.accessLogDays * DAY_MS;
  const rollupCutoff = Math.floor((now - ROLLUP_RETENTION_DAYS * DAY_MS) / 60_000);

  const firstKept = db.prepare<[number], { id: number }>('SELECT id FROM access_logs WHERE timestamp >= ? ORDER BY id LIMIT 1');
  const boundary = firstKept.get(logCutoff)?.id ?? Number.MAX_SAFE_INTEGER;
  const deleteLogs = db.prepare(
    `DELETE FROM access_logs WHERE id IN
       (SELECT id FROM access_logs WHERE id < ? AND timestamp < ? ORDER BY id LIMIT ?)`,
  );
  const deleteRollups = db.prepare(
    `DELETE FROM access_rollups WHERE (service_id, minute) IN
       (SELECT service_id, minute FROM access_rollups WHERE minute < ? LIMIT ?)`,
  );
  const accessLogs = await inBatches(batchSize, stopped, () => deleteLogs.run(boundary, logCutoff, batchSize).changes);
  const rollups = await inBatches(batchSize, stopped, () => deleteRollups.run(rollupCutoff, batchSize).changes);
  return { accessLogs, rollups };
}

/** Runs `deleteBatch` until it deletes fewer than a full batch; each call is its own transaction. */
async function inBatches(batchSize: number, stopped: () => boolean, deleteBatch: () => number): Promise<number> {
  let total = 0;
  while (!stopped()) {
    const deleted = deleteBatch();
    total += deleted;
    if (deleted < batchSize) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}

/**
 * Starts pruning a minute after start, then every {@link RETENTION_INTERVAL_MS} (timer `unref`ed, so it never keeps the
 * process alive): raw access logs past `ACCESS_LOG_RETENTION_DAYS`, rollups past
 * {@link ROLLUP_RETENTION_DAYS}; then per-minute rollups past {@link COMPACT_ROLLUPS_AFTER_DAYS}
 * are folded into hours. Returns the function that stops it; a run in progress stops before its
 * next batch.
 */
export function startRetention(db: Database, config: Config, logger: Logger): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const run = async () => {
    try {
      const deleted = await prune(db, { accessLogDays: config.accessLogRetentionDays, stopped: () => stopped });
      if (deleted.accessLogs + deleted.rollups > 0) logger.info(deleted, 'retention: deleted expired records');
      const folded = await compactRollups(db, { stopped: () => stopped });
      if (folded > 0) logger.info({ folded, olderThanDays: COMPACT_ROLLUPS_AFTER_DAYS }, 'retention: folded per-minute rollups into hours');
    } catch (err) {
      logger.error({ err }, 'retention: pruning failed; will retry');
    }
    if (!stopped) timer = setTimeout(run, RETENTION_INTERVAL_MS).unref();
  };
  timer = setTimeout(run, FIRST_RUN_MS).unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
