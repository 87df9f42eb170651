/**
 * Reading the access-log records a gateway stored: a read-only connection to its SQLite file
 * (WAL mode lets it read while the admin process writes).
 */
import BetterSqlite3 from 'better-sqlite3';

/** How long the count must stay the same to call the pipeline drained, in ms. */
const STABLE_FOR_MS = 2_000;
/** Longest wait for the pipeline to drain, in ms. */
const DRAIN_TIMEOUT_MS = 60_000;
const POLL_MS = 250;

/** Access-log records stored, per service id. */
export function countStoredAccessLogs(databasePath: string): Map<string, number> {
  const db = new BetterSqlite3(databasePath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare('SELECT service_id AS serviceId, count(*) AS n FROM access_logs GROUP BY service_id').all() as { serviceId: string; n: number }[];
    return new Map(rows.map((row) => [row.serviceId, row.n]));
  } finally {
    db.close();
  }
}

/**
 * Waits until the number of stored records has not changed for {@link STABLE_FOR_MS} (the admin
 * process has consumed the stream), or {@link DRAIN_TIMEOUT_MS} has passed.
 * @returns the last total seen.
 */
export async function waitForStoredAccessLogs(databasePath: string): Promise<number> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  let last = -1;
  let stableSince = Date.now();
  for (;;) {
    const total = [...countStoredAccessLogs(databasePath).values()].reduce((sum, n) => sum + n, 0);
    if (total !== last) {
      last = total;
      stableSince = Date.now();
    } else if (Date.now() - stableSince >= STABLE_FOR_MS || Date.now() > deadline) {
      return total;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
