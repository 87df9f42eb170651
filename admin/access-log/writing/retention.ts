import type { Database } from 'better-sqlite3';
import type { AccessLogStore } from './access-log-store.js';
import { DAY_MS, MINUTE_MS } from '../day-files.js';
import { compactRollups } from '../rollup-compaction.js';

/** Rollup rows deleted per transaction, so a store waiting behind them never waits long. */
const RETENTION_BATCH_SIZE = 5_000;
/** How long traffic rollups are kept (per minute for the first days, then per hour: see rollup-compaction.ts). */
export const ROLLUP_RETENTION_DAYS = 400;
/** How often the day files' age and size are checked (also after every stored batch). */
const LIMITS_INTERVAL_MS = 60_000;
/** How often rollups are pruned and compacted. */
const ROLLUPS_INTERVAL_MS = 10 * 60_000;

export interface PruneOptions {
  now?: number;
  batchSize?: number;
  /** Checked before each batch; true stops the run (the thread is closing). */
  stopped?: () => boolean;
}

/**
 * Deletes traffic rollups older than {@link ROLLUP_RETENTION_DAYS}, in transactions of at most
 * `batchSize` rows, yielding between them.
 * @returns how many rows were deleted.
 */
export async function pruneRollups(db: Database, options: PruneOptions = {}): Promise<number> {
  const now = options.now ?? Date.now();
  const batchSize = options.batchSize ?? RETENTION_BATCH_SIZE;
  const cutoff = Math.floor((now - ROLLUP_RETENTION_DAYS * DAY_MS) / MINUTE_MS);
  const deleteRollups = db.prepare(
    `DELETE FROM access_rollups WHERE (service_id, minute) IN
       (SELECT service_id, minute FROM access_rollups WHERE minute < ? LIMIT ?)`,
  );
  let total = 0;
  while (db.open && !options.stopped?.()) {
    const deleted = deleteRollups.run(cutoff, batchSize).changes;
    total += deleted;
    if (deleted < batchSize) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}

/**
 * The access log's upkeep, run by the writer thread beside its storing (never on an event loop
 * that serves requests): the day files' retention and budget every minute (a day ends, the disk
 * fills from elsewhere), rollups past {@link ROLLUP_RETENTION_DAYS} deleted and older minutes
 * folded into hours every 10 minutes. Timers are `unref`ed.
 * @returns the function that stops it; a run in progress stops before its next batch.
 */
export function startMaintenance(db: Database, store: AccessLogStore, report: (fields: Record<string, unknown>, message: string) => void): () => void {
  let stopped = false;
  const isStopped = () => stopped;
  const limits = setInterval(() => store.enforceLimits(), LIMITS_INTERVAL_MS).unref();
  const rollups = async () => {
    try {
      const deleted = await pruneRollups(db, { stopped: isStopped });
      const folded = await compactRollups(db, { stopped: isStopped });
      if (deleted + folded > 0) report({ deleted, folded }, 'access log: pruned and compacted traffic rollups');
    } catch (err) {
      report({ err: (err as Error).message }, 'access log: rollup upkeep failed; will retry');
    }
  };
  const rollupTimer = setInterval(() => void rollups(), ROLLUPS_INTERVAL_MS).unref();
  return () => {
    stopped = true;
    clearInterval(limits);
    clearInterval(rollupTimer);
  };
}
