/**
 * A day dropped by retention, timed: the production store (`AccessLogStore`, as the admin's writer
 * thread runs it) opened on a stopped gateway's database and day files with a clock moved forward
 * so that exactly the oldest day is past ACCESS_LOG_RETENTION_DAYS, then one
 * `enforceLimits()`: what the writer thread does after a batch, or every minute, when a day
 * expires (list the day files, delete the expired one, size the rest against the budget).
 */
import BetterSqlite3 from 'better-sqlite3';
import { AccessLogStore } from '../../admin/access-log/writing/access-log-store.js';
import { accessLogDirOf, dayBytes, dayName, dayPath, DAY_MS, listDays } from '../../admin/access-log/day-files.js';
import { diskBudgetFor } from '../../admin/access-log/writing/disk-budget.js';
import { openDatabase } from '../../admin/database.js';
import { RETENTION_DAYS } from './access-log-fill.js';

/** What dropping the oldest day took. */
export interface DayDropResult {
  /** The day deleted, e.g. `2026-10-27`. */
  day: string;
  /** Its records and bytes on disk. */
  records: number;
  bytes: number;
  /** The `enforceLimits()` call that deleted it, in ms. */
  ms: number;
  /** Day files before and after. */
  daysBefore: number;
  daysAfter: number;
}

/**
 * Times the retention's deletion of the oldest day of the gateway database at `databasePath`
 * (its processes stopped).
 * @throws when there is no day file, or the call did not delete exactly that day.
 */
export function timeDayDrop(databasePath: string): DayDropResult {
  const dir = accessLogDirOf(databasePath);
  const days = listDays(dir);
  const oldest = days.at(-1);
  if (oldest === undefined) throw new Error(`no day files in ${dir}`);
  const bytes = dayBytes(dir, oldest);
  const file = new BetterSqlite3(dayPath(dir, oldest), { readonly: true, fileMustExist: true });
  const records = file.prepare('SELECT count(*) FROM records').pluck().get() as number;
  file.close();

  let now = Date.now();
  const db = openDatabase(databasePath);
  const store = new AccessLogStore(db, { dir, retentionDays: RETENTION_DAYS, budget: diskBudgetFor(dir, undefined), now: () => now });
  try {
    // The first instant at which the oldest day's last ms is RETENTION_DAYS old (access-log-store.ts: day < dayOf(now − retention)).
    now = (oldest + 1 + RETENTION_DAYS) * DAY_MS;
    const started = performance.now();
    store.enforceLimits();
    const ms = performance.now() - started;
    const after = listDays(dir);
    if (after.includes(oldest) || after.length !== days.length - 1) throw new Error(`expected ${dayName(oldest)} alone deleted; days left: ${after.map(dayName).join(', ')}`);
    return { day: dayName(oldest), records, bytes, ms: Math.round(ms * 100) / 100, daysBefore: days.length, daysAfter: after.length };
  } finally {
    store.close();
    db.close();
  }
}
