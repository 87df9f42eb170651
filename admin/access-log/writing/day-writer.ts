import type { Database, Statement } from 'better-sqlite3';
import type { AccessLogEntry } from '../../../shared/types.js';
import { DAY_MS, MINUTE_MS, openDayFile } from '../day-files.js';
import { addTargetColumn } from '../day-schema.js';

/** Codes and once-seen paths a writer remembers per day before it starts over (bounds its memory). */
const MEMORY_LIMIT = 200_000;

/**
 * One shipped batch of records bound for one day: `key` names the batch (the same on every
 * re-delivery), `records` are those of the batch whose timestamp falls in the day.
 */
export interface DayGroup {
  key: Buffer;
  records: readonly AccessLogEntry[];
}

/** What one {@link DayWriter.write} did: records stored and skipped, and the groups it stored. */
export interface DayWriteResult {
  stored: number;
  duplicates: number;
  fresh: DayGroup[];
}

/**
 * The writer of one day file (day-schema.ts): turns records into rows of codes, and stores each
 * call's batches in one transaction with their minute counts and batch keys.
 */
export class DayWriter {
  readonly db: Database;
  readonly #dayStart: number;
  readonly #codes = new Map<string, number>();
  /** Paths stored inline once today; the second sighting moves them into the dictionary. */
  readonly #seenOnce = new Set<string>();
  readonly #findString: Statement<[string], { code: number }>;
  readonly #insertString: Statement<[string]>;
  readonly #insertRecord: Statement<unknown[]>;
  readonly #addCount: Statement<[number, number, number, number]>;
  readonly #addDayCount: Statement<[number, number, number]>;
  readonly #addUserCount: Statement<[number, number, number]>;
  readonly #claimBatch: Statement<[Buffer]>;
  readonly #write: (groups: readonly DayGroup[]) => DayWriteResult;

  /**
   * Opens `day`'s file in `dir` (it must exist: day-files.ts `createDayFile`), its write-ahead log
   * checkpointed once it holds `walBytes` and cut back to that size after.
   */
  constructor(dir: string, day: number, walBytes: number) {
    this.db = openDayFile(dir, day, false);
    addTargetColumn(this.db);
    this.db.pragma(`journal_size_limit = ${walBytes}`);
    this.db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(walBytes / 4096))}`);
    this.#dayStart = day * DAY_MS;
    this.#findString = this.db.prepare('SELECT code FROM strings WHERE text = ?');
    this.#insertString = this.db.prepare('INSERT INTO strings (text) VALUES (?)');
    this.#insertRecord = this.db.prepare(
      'INSERT INTO records (time, service, user, path, method, status, duration, ip, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#addCount = this.db.prepare(
      `INSERT INTO minute_counts (service, class, minute, count) VALUES (?, ?, ?, ?)
       ON CONFLICT (service, class, minute) DO UPDATE SET count = count + excluded.count`,
    );
    this.#addDayCount = this.db.prepare(
      `INSERT INTO service_counts (service, class, count) VALUES (?, ?, ?)
       ON CONFLICT (service, class) DO UPDATE SET count = count + excluded.count`,
    );
    this.#addUserCount = this.db.prepare(
      `INSERT INTO user_counts (service, user, count) VALUES (?, ?, ?)
       ON CONFLICT (service, user) DO UPDATE SET count = count + excluded.count`,
    );
    this.#claimBatch = this.db.prepare('INSERT INTO batches (key) VALUES (?) ON CONFLICT DO NOTHING');
    this.#write = this.db.transaction((groups: readonly DayGroup[]) => this.#writeGroups(groups));
  }

  /**
   * Stores `groups` in one transaction. A group whose key is already stored (a re-delivered
   * batch) is skipped whole.
   * @returns how many records were stored, how many skipped as duplicates, and the groups stored.
   * @throws the SQLite error (SQLITE_FULL when the file reached its `max_page_count` or the disk
   *   is full); then nothing of the call is stored, and the codes learnt during it are forgotten.
   */
  write(groups: readonly DayGroup[]): DayWriteResult {
    try {
      return this.#write(groups);
    } catch (error) {
      // Codes inserted by the rolled-back transaction no longer exist.
      this.#codes.clear();
      this.#seenOnce.clear();
      throw error;
    }
  }

  /** Caps the file at `pages` pages (PRAGMA max_page_count): growing past it fails with SQLITE_FULL. */
  limitPages(pages: number): void {
    this.db.pragma(`max_page_count = ${Math.max(1, Math.floor(pages))}`);
  }

  /** Copies the write-ahead log into the file and empties it (waits for readers: milliseconds). */
  checkpoint(): void {
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  close(): void {
    this.db.close();
  }

  #writeGroups(groups: readonly DayGroup[]): DayWriteResult {
    const counts = new Map<string, number[]>();
    const userCounts = new Map<string, number[]>();
    const fresh: DayGroup[] = [];
    let stored = 0;
    let duplicates = 0;
    for (const group of groups) {
      const { key, records } = group;
      if (this.#claimBatch.run(key).changes === 0) {
        duplicates += records.length;
        continue;
      }
      for (const r of records) {
        const time = r.timestamp - this.#dayStart;
        const service = this.#code(r.serviceId);
        const status = r.statusCode;
        const user = r.userId === null ? null : this.#code(r.userId);
        this.#insertRecord.run(
          time, service, user, this.#path(r.path),
          this.#code(r.method), status, Math.round(r.responseTimeMs), this.#code(r.ipAddress),
          r.target ? this.#code(r.target) : null,
        );
        if (user !== null) {
          const userCount = userCounts.get(`${service} ${user}`);
          if (userCount) userCount[2]!++;
          else userCounts.set(`${service} ${user}`, [service, user, 1]);
        }
        const countKey = `${service} ${Math.floor(status / 100)} ${Math.floor(time / MINUTE_MS)}`;
        const count = counts.get(countKey);
        if (count) count[3]!++;
        else counts.set(countKey, [service, Math.floor(status / 100), Math.floor(time / MINUTE_MS), 1]);
      }
      stored += records.length;
      fresh.push(group);
    }
    const dayCounts = new Map<string, number[]>();
    for (const [service, cls, minute, count] of counts.values()) {
      this.#addCount.run(service!, cls!, minute!, count!);
      const dayCount = dayCounts.get(`${service} ${cls}`);
      if (dayCount) dayCount[2]! += count!;
      else dayCounts.set(`${service} ${cls}`, [service!, cls!, count!]);
    }
    for (const [service, cls, count] of dayCounts.values()) this.#addDayCount.run(service!, cls!, count!);
    for (const [service, user, count] of userCounts.values()) this.#addUserCount.run(service!, user!, count!);
    return { stored, duplicates, fresh };
  }

  /** The dictionary code of `text`, added to the dictionary when new. */
  #code(text: string): number {
    let code = this.#codes.get(text);
    if (code !== undefined) return code;
    code = this.#findString.get(text)?.code ?? Number(this.#insertString.run(text).lastInsertRowid);
    if (this.#codes.size >= MEMORY_LIMIT) this.#codes.clear();
    this.#codes.set(text, code);
    return code;
  }

  /**
   * A path's stored value: its code once seen twice today, else the text itself. The code is a
   * bigint because better-sqlite3 binds other numbers as REAL (8 bytes) in a column without a type.
   */
  #path(path: string): bigint | string {
    const code = this.#codes.get(path);
    if (code !== undefined) return BigInt(code);
    if (this.#seenOnce.delete(path)) return BigInt(this.#code(path));
    if (this.#seenOnce.size >= MEMORY_LIMIT) this.#seenOnce.clear();
    this.#seenOnce.add(path);
    return path;
  }
}
