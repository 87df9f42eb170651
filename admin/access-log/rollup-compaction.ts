import type { Database } from 'better-sqlite3';
import { STATUS_CLASSES } from '../../shared/http/status-classes.js';
import { BUCKET_COLUMNS } from './latency-histogram.js';

/**
 * Per-minute traffic rollups older than this are folded into one row per hour. The console's
 * longest chart covers one day and its counts one hour, so nothing reads minutes older than that;
 * kept per minute for the 400 days of retention, a busy service would hold 576,000 rows.
 */
export const COMPACT_ROLLUPS_AFTER_DAYS = 2;

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;
const COLUMNS = [...STATUS_CLASSES.map((name) => `count_${name}`), ...BUCKET_COLUMNS];

export interface CompactOptions {
  now?: number;
  /** Hours (of one service) folded per transaction. */
  batchSize?: number;
  /** Checked before each batch; true stops the run. */
  stopped?: () => boolean;
}

/**
 * Folds the per-minute rollups of every hour that ended more than {@link COMPACT_ROLLUPS_AFTER_DAYS}
 * ago into the row of the hour's first minute (added to it, or created), then deletes the other
 * minutes: each hour's counts and latency buckets keep their sums, so any range of whole hours
 * reads the same totals and percentiles as before. Runs in transactions of `batchSize` hours,
 * yielding to the event loop between them.
 * @returns how many per-minute rows were folded away.
 */
export async function compactRollups(db: Database, options: CompactOptions = {}): Promise<number> {
  const now = options.now ?? Date.now();
  const batchSize = options.batchSize ?? 200;
  const stopped = () => !db.open || (options.stopped?.() ?? false);
  const cutoffHour = Math.floor((now - COMPACT_ROLLUPS_AFTER_DAYS * DAY_MS) / MINUTE_MS / 60) * 60;
  const hoursToFold = db.prepare<[number, number], { service_id: string; hour: number }>(
    `SELECT service_id, (minute / 60) * 60 AS hour FROM access_rollups
     WHERE minute < ? AND minute % 60 != 0 GROUP BY service_id, hour LIMIT ?`,
  );
  const fold = db.prepare(
    `INSERT INTO access_rollups (service_id, minute, ${COLUMNS.join(', ')})
     SELECT service_id, :hour, ${COLUMNS.map((column) => `sum(${column})`).join(', ')} FROM access_rollups
     WHERE service_id = :service AND minute > :hour AND minute < :hour + 60 GROUP BY service_id
     ON CONFLICT (service_id, minute) DO UPDATE SET ${COLUMNS.map((column) => `${column} = ${column} + excluded.${column}`).join(', ')}`,
  );
  const remove = db.prepare('DELETE FROM access_rollups WHERE service_id = :service AND minute > :hour AND minute < :hour + 60');
  const foldBatch = db.transaction((hours: { service_id: string; hour: number }[]) => {
    let folded = 0;
    for (const { service_id: service, hour } of hours) {
      fold.run({ service, hour });
      folded += remove.run({ service, hour }).changes;
    }
    return folded;
  });
  let total = 0;
  while (!stopped()) {
    const hours = hoursToFold.all(cutoffHour, batchSize);
    total += foldBatch(hours);
    if (hours.length < batchSize) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return total;
}
