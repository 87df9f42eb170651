import { mkdirSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { errorCode } from '../../shared/error-code.js';

/**
 * Raw access-log records live in one SQLite file per UTC day (`2025-01-31.sqlite`) in a folder of
 * their own beside the gateway's database, so that expiring a day is deleting a file (O(1), however
 * many records it holds) and a full access log can never take the registry or sessions with it.
 * This module names, creates, lists and deletes those files; day-schema.ts says what is in one.
 */

/** One day in ms. */
export const DAY_MS = 86_400_000;
/** One minute in ms. */
export const MINUTE_MS = 60_000;

const NAME = /^(\d{4})-(\d\d)-(\d\d)\.sqlite$/;
const SUFFIX = '.sqlite';

/**
 * The folder of the day files for the gateway database at `databasePath`: `gateway.db` →
 * `gateway-access-log/` beside it.
 */
export function accessLogDirOf(databasePath: string): string {
  const name = basename(databasePath, extname(databasePath));
  return join(dirname(databasePath), `${name}-access-log`);
}

/** The UTC day (days since 1970-01-01) that holds epoch ms `ms`. */
export const dayOf = (ms: number): number => Math.floor(ms / DAY_MS);

/** `2025-01-31` for a day number. */
export const dayName = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The path of `day`'s file in `dir`. */
export const dayPath = (dir: string, day: number): string => join(dir, `${dayName(day)}${SUFFIX}`);

/** The days that have a file in `dir`, newest first (none when the folder does not exist yet). */
export function listDays(dir: string): number[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return [];
    throw error;
  }
  const days: number[] = [];
  for (const name of names) {
    const match = NAME.exec(name);
    if (match) days.push(dayOf(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]))));
  }
  return days.sort((a, b) => b - a);
}

/** Bytes `day`'s file takes on disk with its write-ahead log (0 when it is gone). */
export function dayBytes(dir: string, day: number): number {
  const path = dayPath(dir, day);
  return sizeOf(path) + sizeOf(`${path}-wal`);
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Creates `day`'s file with `schema` under a temporary name, then renames it into place, so a
 * reader never opens a file without its tables. An existing file is left as it is.
 */
export function createDayFile(dir: string, day: number, schema: string): void {
  const path = dayPath(dir, day);
  if (sizeOf(path) > 0) return;
  mkdirSync(dir, { recursive: true });
  const fresh = `${path}.new`;
  removeFiles(fresh);
  const db = new BetterSqlite3(fresh);
  db.pragma('journal_mode = WAL');
  db.exec(schema);
  db.close(); // checkpoints and removes the new file's WAL
  renameSync(fresh, path);
}

/** Deletes `day`'s file and its WAL and shared-memory files (close every connection to it first). */
export function deleteDayFile(dir: string, day: number): void {
  removeFiles(dayPath(dir, day));
}

function removeFiles(path: string): void {
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
}

/**
 * Opens `day`'s file: WAL (the writer thread appends while the reader thread reads),
 * `synchronous=NORMAL` for a writer as for the main database, and a small page cache.
 * @throws when the file cannot be opened (for `readonly`, when it does not exist).
 */
export function openDayFile(dir: string, day: number, readonly: boolean): Database {
  const db = new BetterSqlite3(dayPath(dir, day), { readonly, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  db.pragma('cache_size = -2000');
  if (!readonly) db.pragma('synchronous = NORMAL');
  return db;
}
