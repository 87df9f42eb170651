/**
 * Reading the access-log records a gateway stored: read-only connections to the day files in the
 * folder beside its SQLite file (admin/access-log/day-files.ts; WAL mode lets them read while the
 * admin process writes).
 */
import { accessLogDirOf, listDays, openDayFile } from '../../admin/access-log/day-files.js';

/** How long the count must stay the same to call the pipeline drained, in ms. */
const STABLE_FOR_MS = 2_000;
/** Longest wait for the pipeline to drain, in ms. */
const DRAIN_TIMEOUT_MS = 60_000;
const POLL_MS = 250;

/**
 * Access-log records stored by the gateway whose database is at `databasePath`, per service id:
 * the rows of every day file (counted, not read from the files' per-minute counts, so the check
 * compares the requests served with the records themselves).
 */
export function countStoredAccessLogs(databasePath: string): Map<string, number> {
  const dir = accessLogDirOf(databasePath);
  const counts = new Map<string, number>();
  for (const day of listDays(dir)) {
    let db;
    try {
      db = openDayFile(dir, day, true);
    } catch {
      continue; // deleted (retention, size) since the folder was listed
    }
    try {
      const rows = db
        .prepare('SELECT (SELECT text FROM strings WHERE code = r.service) AS serviceId, count(*) AS n FROM records r GROUP BY r.service')
        .all() as { serviceId: string; n: number }[];
      for (const row of rows) counts.set(row.serviceId, (counts.get(row.serviceId) ?? 0) + row.n);
    } finally {
      db.close();
    }
  }
  return counts;
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
