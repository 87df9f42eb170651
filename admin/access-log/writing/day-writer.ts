import type { Database, Statement } from 'better-sqlite3';
import type { AccessLogEntry } from '../../../shared/types.js';
import { DAY_MS, MINUTE_MS, openDayFile } from '../day-files.js';
import { addRecordColumns } from '../day-schema.js';
import { storedRequestId, storedTrace } from '../request-ids.js';
import { AddressShares, recordBytes } from './address-shares.js';
import { BoundedStrings } from './bounded-strings.js';

/**
 * Bytes of strings a writer remembers, for its dictionary codes and for its once-seen paths each
 * (bounded-strings.ts estimates them), before it starts over: 16 MiB each, 32 MiB per open day
 * file, whatever the paths (200,000 typical ones fit; 1,000 of 15 KB do).
 */
export const STRING_MEMORY_BYTES = 16 * 2 ** 20;

/**
 * One shipped batch of records bound for one day: `key` names the batch (the same on every
 * re-delivery), `records` are those of the batch whose timestamp falls in the day.
 */
export interface DayGroup {
  key: Buffer;
  records: readonly AccessLogEntry[];
}

/** What one {@link DayWriter.write} did, in records, and the groups it stored. */
export interface DayWriteResult {
  /** Stored as rows of their own. */
  stored: number;
  /** Added to the `count` of their address's summary record (address-shares.ts) instead. */
  summarised: number;
  duplicates: number;
  fresh: DayGroup[];
  /** Client addresses whose records went over their share of the day's budget with this write. */
  overShare: string[];
}

/** The per-minute, per-day and per-user counts of the rows one write adds, keyed by their primary keys. */
type RowCounts = { minutes: Map<string, number[]>; users: Map<string, number[]> };

/**
 * The writer of one day file (day-schema.ts): turns records into rows of codes, and stores each
 * call's batches in one transaction with their minute counts and batch keys. Given a share of the
 * day's budget per client address, it summarises the records of an address past it
 * (address-shares.ts).
 */
export class DayWriter {
  readonly db: Database;
  readonly #dayStart: number;
  readonly #codes: BoundedStrings<number>;
  /** Paths stored inline once today; the second sighting moves them into the dictionary. */
  readonly #seenOnce: BoundedStrings<true>;
  readonly #shares: AddressShares | undefined;
  readonly #findString: Statement<[string], { code: number }>;
  readonly #insertString: Statement<[string]>;
  readonly #insertRecord: Statement<unknown[]>;
  readonly #insertTrace: Statement<[number | bigint, Buffer]>;
  readonly #addToSummary: Statement<[number, number]>;
  readonly #addCount: Statement<[number, number, number, number]>;
  readonly #addDayCount: Statement<[number, number, number]>;
  readonly #addUserCount: Statement<[number, number, number]>;
  readonly #claimBatch: Statement<[Buffer]>;
  readonly #write: (groups: readonly DayGroup[]) => DayWriteResult;

  /**
   * Opens `day`'s file in `dir` (it must exist: day-files.ts `createDayFile`), its write-ahead log
   * checkpointed once it holds `walBytes` and cut back to that size after. With `shareBytes`, the
   * records of a client address past that many bytes today are summarised; without, none are.
   * `stringBytes` bounds the strings it remembers ({@link STRING_MEMORY_BYTES} by default).
   */
  constructor(dir: string, day: number, walBytes: number, options: { shareBytes?: number; stringBytes?: number } = {}) {
    this.db = openDayFile(dir, day, false);
    addRecordColumns(this.db);
    this.db.pragma(`journal_size_limit = ${walBytes}`);
    this.db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.floor(walBytes / 4096))}`);
    this.#dayStart = day * DAY_MS;
    this.#codes = new BoundedStrings(options.stringBytes ?? STRING_MEMORY_BYTES);
    this.#seenOnce = new BoundedStrings(options.stringBytes ?? STRING_MEMORY_BYTES);
    this.#shares = options.shareBytes === undefined ? undefined : new AddressShares(options.shareBytes);
    this.#findString = this.db.prepare('SELECT code FROM strings WHERE text = ?');
    this.#insertString = this.db.prepare('INSERT INTO strings (text) VALUES (?)');
    this.#insertRecord = this.db.prepare(
      'INSERT INTO records (time, service, user, path, method, status, duration, ip, target, count, path_truncated, host, request_id, http2, verify) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#insertTrace = this.db.prepare('INSERT INTO traces (record, trace) VALUES (?, ?)');
    this.#addToSummary = this.db.prepare('UPDATE records SET count = coalesce(count, 1) + ? WHERE id = ?');
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

  /** The estimated bytes of the strings it remembers now (at most twice `stringBytes`): for tests. */
  get stringMemoryBytes(): number {
    return this.#codes.bytes + this.#seenOnce.bytes;
  }

  /**
   * Stores `groups` in one transaction. A group whose key is already stored (a re-delivered
   * batch) is skipped whole.
   * @returns how many records were stored, summarised and skipped as duplicates, the groups
   *   stored, and the addresses that went over their share.
   * @throws the SQLite error (SQLITE_FULL when the file reached its `max_page_count` or the disk
   *   is full); then nothing of the call is stored, and what it learnt is forgotten.
   */
  write(groups: readonly DayGroup[]): DayWriteResult {
    try {
      const result = this.#write(groups);
      this.#shares?.commit();
      return result;
    } catch (error) {
      // Codes inserted by the rolled-back transaction no longer exist, nor do its summaries.
      this.#codes.clear();
      this.#seenOnce.clear();
      this.#shares?.rollback();
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
    const counts: RowCounts = { minutes: new Map(), users: new Map() };
    const result: DayWriteResult = { stored: 0, summarised: 0, duplicates: 0, fresh: [], overShare: [] };
    for (const group of groups) {
      if (this.#claimBatch.run(group.key).changes === 0) {
        result.duplicates += group.records.length;
        continue;
      }
      for (const record of group.records) {
        if (this.#writeRecord(record, counts, result.overShare)) result.stored++;
        else result.summarised++;
      }
      result.fresh.push(group);
    }
    this.#addCounts(counts);
    return result;
  }

  /**
   * Stores one record as a row, counted in `counts`; or, when its address is over its share and
   * has a summary record for the record's service, minute and status class, adds to that
   * record's `count` instead (the counts count rows: unchanged).
   * @returns false when it was added to a summary; an address that went over its share is pushed to `overShare`.
   */
  #writeRecord(r: AccessLogEntry, counts: RowCounts, overShare: string[]): boolean {
    const time = r.timestamp - this.#dayStart;
    const service = this.#code(r.serviceId);
    const ip = this.#code(r.ipAddress);
    const cls = Math.floor(r.statusCode / 100);
    const minute = Math.floor(time / MINUTE_MS);
    const over = this.#shares?.isOver(ip) ?? false;
    const summary = over ? this.#shares!.summaryOf(ip, service, minute, cls) : undefined;
    if (summary !== undefined) {
      this.#addToSummary.run(r.count ?? 1, summary);
      return false;
    }
    const user = r.userId === null ? null : this.#code(r.userId);
    const { lastInsertRowid } = this.#insertRecord.run(
      time, service, user, this.#path(r.path),
      this.#code(r.method), r.statusCode, Math.round(r.responseTimeMs), ip,
      r.target ? this.#code(r.target) : null,
      r.count !== undefined && r.count > 1 ? r.count : null,
      r.pathTruncated ? 1 : null,
      r.host ? this.#code(r.host) : null,
      r.requestId === undefined ? null : storedRequestId(r.requestId),
      r.protocol === 'h2' ? 1 : null,
      r.verify === true ? 1 : null,
    );
    if (r.traceId !== undefined && r.spanId !== undefined) this.#insertTrace.run(lastInsertRowid, storedTrace(r.traceId, r.spanId));
    if (over) this.#shares!.startSummary(ip, service, minute, cls, Number(lastInsertRowid));
    if (this.#shares?.charge(ip, recordBytes(r))) overShare.push(r.ipAddress);
    if (user !== null) tally(counts.users, `${service} ${user}`, [service, user], 1);
    tally(counts.minutes, `${service} ${cls} ${minute}`, [service, cls, minute], 1);
    return true;
  }

  /** Adds one write's row counts to `minute_counts`, `service_counts` and `user_counts`. */
  #addCounts({ minutes, users }: RowCounts): void {
    const days = new Map<string, number[]>();
    for (const [service, cls, minute, count] of minutes.values()) {
      this.#addCount.run(service!, cls!, minute!, count!);
      tally(days, `${service} ${cls}`, [service!, cls!], count!);
    }
    for (const [service, cls, count] of days.values()) this.#addDayCount.run(service!, cls!, count!);
    for (const [service, user, count] of users.values()) this.#addUserCount.run(service!, user!, count!);
  }

  /** The dictionary code of `text`, added to the dictionary when new. */
  #code(text: string): number {
    let code = this.#codes.get(text);
    if (code !== undefined) return code;
    code = this.#findString.get(text)?.code ?? Number(this.#insertString.run(text).lastInsertRowid);
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
    this.#seenOnce.set(path, true);
    return path;
  }
}

/** Adds `n` to the count (the last element) of `key`'s row in `rows`, made of `columns` and 0 when new. */
function tally(rows: Map<string, number[]>, key: string, columns: number[], n: number): void {
  const row = rows.get(key);
  if (row) row[row.length - 1]! += n;
  else rows.set(key, [...columns, n]);
}
