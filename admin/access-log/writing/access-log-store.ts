import type { Database } from 'better-sqlite3';
import type { AccessLogBatch } from '../../../shared/backends/access-log-batch.js';
import { errorCode } from '../../../shared/error-code.js';
import type { AccessLogEntry } from '../../../shared/types.js';
import { createDayFile, dayBytes, dayName, dayOf, DAY_MS, deleteDayFile, listDays } from '../day-files.js';
import { DAY_SCHEMA, dayRecords } from '../day-schema.js';
import { groupByDay } from './day-groups.js';
import { DayWriter, type DayGroup } from './day-writer.js';
import { filesystemOf, headroom, type DiskBudget } from './disk-budget.js';
import { TrafficRollups } from '../traffic-rollups.js';
import type { AccessLogStoreOptions, BudgetDeletion, DeletionReason, StoreTotals } from './store-options.js';

/** SQLite's page size in the day files (its default). */
const PAGE_BYTES = 4096;
/** Day files kept open for writing: today's, and one more for records that arrive late. */
const OPEN_WRITERS = 2;
/** Room under which a full day stays full unless an older day is deleted: a quarter of the cap. */
const ROOM_AGAIN_SHARE = 4;
/** How long the folder's listing is trusted, in ms (another process may add or remove files). */
const RELIST_MS = 10_000;
/** How long the disk's free space is trusted, in ms. */
const FREE_SPACE_MS = 1_000;
/** Room under which no file is made for a day older than every kept one (it would be the first deleted). */
const MIN_ROOM_BYTES = 16 * PAGE_BYTES;

/**
 * The most a day file's write-ahead log keeps between batches, in bytes: a 32nd of the cap,
 * between 64 KiB and 4 MiB. The budget sets it aside for each open file, so files and logs
 * together stay within the cap.
 */
export function walBytes(budget: DiskBudget): number {
  return Math.min(4 * 2 ** 20, Math.max(64 * 2 ** 10, Math.floor(budget.maxBytes / 32 / PAGE_BYTES) * PAGE_BYTES));
}

/**
 * The access log's storing side (design.md §3.9), run by the admin's writer thread: each record
 * goes into its UTC day's file (day-files.ts), and every batch is counted into the traffic
 * rollups of the gateway's database. Keeps the day files within their retention and disk budget
 * by deleting the oldest whole days. Idempotent per shipped batch: a re-delivered batch (the
 * Redis stream's at-least-once delivery) stores and counts nothing twice.
 */
export class AccessLogStore {
  readonly #options: AccessLogStoreOptions;
  readonly #addRollups: (records: readonly AccessLogEntry[]) => void;
  readonly #writers = new Map<number, DayWriter>();
  /** Days whose file cannot grow (budget reached and no older day to delete): their records are discarded. */
  readonly #fullDays = new Set<number>();
  /** Days below this are not written: expired, or deleted to keep the budget. */
  #floorDay = -Infinity;
  /** Set while records are being discarded, so that is told once. */
  #discarding = false;
  /** Set while the rollups cannot be written for want of disk, so that is told once. */
  #rollupsFull = false;
  /** The folder's days as last listed (undefined: list again), when, and their sizes in bytes. */
  #days: number[] | undefined;
  #listedAt = 0;
  readonly #sizes = new Map<number, number>();
  /** The disk's free bytes as last read, and when (-Infinity: read it before use). */
  #free = 0;
  #freeAt = -Infinity;
  readonly #totals: StoreTotals = {
    stored: 0, summarised: 0, addressesOverShare: 0, duplicates: 0, expired: 0, discarded: 0, bytes: 0, days: 0,
    daysDeleted: { retention: 0, max_size: 0, disk_reserve: 0 },
  };

  /** `db` is the gateway's database (for the rollups); the day files are in `options.dir`. */
  constructor(db: Database, options: AccessLogStoreOptions) {
    this.#options = options;
    const rollups = new TrafficRollups(db);
    this.#addRollups = db.transaction((records: readonly AccessLogEntry[]) => rollups.add(records));
    this.enforceLimits();
  }

  get totals(): Readonly<StoreTotals> {
    return this.#totals;
  }

  /**
   * Stores shipped batches: each is the records one proxy shipped together (one JSON text of an
   * {@link AccessLogBatch}), recognised on re-delivery by its first record's event id.
   * @throws the SQLite error of a file that cannot be written for another reason than space;
   *   the days already written stay stored, and a retry skips them.
   */
  storeBatches(batches: readonly (readonly AccessLogEntry[])[], options: { countInRollups?: boolean } = {}): void {
    this.#store(batches, options.countInRollups ?? true);
  }

  /** Stores `records` as one shipped batch (see {@link storeBatches}). */
  insertBatch(records: readonly AccessLogEntry[]): void {
    this.#store([records], true);
  }

  /**
   * Deletes the day files past the retention, then the oldest days while the files exceed the
   * budget (never the newest day), and gives each open writer its share of what room is left.
   * Runs after every stored batch; O(1) per day deleted (a file's deletion), whatever it holds.
   */
  enforceLimits(): void {
    const days = [...this.#listed()];
    const cutoff = dayOf(this.#now() - this.#options.retentionDays * DAY_MS);
    let dropped = false;
    while (days.length > 0 && days[days.length - 1]! < cutoff) {
      this.#drop(days.pop()!, 'retention', cutoff);
      dropped = true;
    }
    let room = this.#room(days);
    if (room < 0) {
      // Write-ahead logs hold copies of pages the files already have: fold them in before deleting days.
      this.#checkpointWriters();
      room = this.#room(days);
    }
    while (days.length > 1 && room < 0) {
      const day = days.pop()!;
      const reason = this.#limitReached();
      room += this.#sizes.get(day) ?? 0;
      this.#drop(day, reason, day + 1);
      dropped = true;
    }
    this.#totals.days = days.length;
    this.#limitWriters(room, dropped);
  }

  /** Closes the open day files. */
  close(): void {
    for (const writer of this.#writers.values()) writer.close();
    this.#writers.clear();
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }

  #store(batches: readonly (readonly AccessLogEntry[])[], countInRollups: boolean): void {
    const floor = Math.max(this.#floorDay, dayOf(this.#now() - this.#options.retentionDays * DAY_MS));
    const { byDay, expired } = groupByDay(batches, floor);
    this.#totals.expired += expired.length;
    const counted = [...expired]; // traffic all the same: the charts count it
    try {
      for (const [day, groups] of byDay) counted.push(...this.#writeDay(day, groups));
    } finally {
      if (countInRollups && counted.length > 0) this.#countInRollups(counted);
      this.enforceLimits();
    }
  }

  /**
   * Writes one day's groups; when its file may not grow, makes room and tries again, and when no
   * room can be made, stores what fits and discards the rest (counted, told once).
   * @returns the records to count in the rollups: those stored now, and those discarded.
   */
  #writeDay(day: number, groups: readonly DayGroup[]): AccessLogEntry[] {
    // Why it retries: SQLITE_FULL says the file reached the size this store lets it have (or the
    // disk is full), and room may yet be made: first the write-ahead logs may hold it (folded into
    // their files, the room measured again), then each day older than this one (deleted, oldest
    // first). Each retry follows one such step and there are finitely many, so the loop ends.
    let checkpointed = false;
    let counted = this.#tryWriteDay(day, groups);
    while (counted === undefined) {
      if (!checkpointed) {
        checkpointed = true;
        this.#checkpointWriters();
        this.#limitWriters(this.#room(this.#listed()), false);
      } else if (!this.#dropOldestBefore(day)) {
        return this.#writeFullDay(day, groups);
      }
      counted = this.#tryWriteDay(day, groups);
    }
    return counted;
  }

  /**
   * One attempt of {@link #writeDay}: records of a day that is gone (or would be at once) count
   * as expired, those of a full day are discarded, the others are written.
   * @returns the records to count in the rollups, or undefined when the file may not grow (SQLITE_FULL).
   * @throws the SQLite error of a file that cannot be written for another reason.
   */
  #tryWriteDay(day: number, groups: readonly DayGroup[]): AccessLogEntry[] | undefined {
    const all = groups.flatMap((group) => group.records);
    if (day < this.#floorDay || this.#firstToGo(day)) {
      this.#totals.expired += all.length; // deleted meanwhile to make room, or would be at once
      return all;
    }
    if (this.#fullDays.has(day)) return this.#discard(day, all);
    try {
      const { stored, summarised, duplicates, fresh, overShare } = this.#writerFor(day).write(groups);
      this.#totals.stored += stored;
      this.#totals.summarised += summarised;
      this.#totals.duplicates += duplicates;
      for (const address of overShare) this.#overShare(day, address);
      this.#storingAgain();
      return fresh.flatMap((group) => group.records);
    } catch (error) {
      if (errorCode(error) !== 'SQLITE_FULL') throw error;
      return undefined;
    }
  }

  /** Deletes the oldest day when it is older than `day`, then keeps the limits; false when there is none. */
  #dropOldestBefore(day: number): boolean {
    const oldest = this.#listed().at(-1);
    if (oldest === undefined || oldest >= day) return false;
    this.#drop(oldest, this.#limitReached(), oldest + 1);
    this.enforceLimits();
    return true;
  }

  /**
   * Writes `groups` into a day that cannot take them all and has no room to make: one at a time,
   * so those that fit are stored; from the first that does not, the day is full and the rest discarded.
   */
  #writeFullDay(day: number, groups: readonly DayGroup[]): AccessLogEntry[] {
    if (groups.length > 1) return groups.flatMap((group) => this.#writeDay(day, [group]));
    this.#fullDays.add(day);
    return this.#discard(day, [...groups[0]!.records]);
  }

  /**
   * Adds records to the traffic rollups. A full disk there (the gateway's database) costs the
   * charts those records, told once, rather than stopping the pipeline: the batch would otherwise
   * be retried for as long as the disk stays full, while the Redis stream grows.
   */
  #countInRollups(records: readonly AccessLogEntry[]): void {
    try {
      this.#addRollups(records);
      this.#rollupsFull = false;
    } catch (error) {
      if (errorCode(error) !== 'SQLITE_FULL') throw error;
      if (!this.#rollupsFull) this.#options.notify?.({ level: 'warn', message: 'traffic rollups not updated: the disk of the gateway database is full', fields: { records: records.length } });
      this.#rollupsFull = true;
    }
  }

  #discard(day: number, records: AccessLogEntry[]): AccessLogEntry[] {
    if (!this.#discarding) {
      this.#discarding = true;
      this.#options.notify?.({
        level: 'warn',
        message: "access log full: new records are not stored until an older day can be deleted (ACCESS_LOG_MAX_SIZE, or the disk's free space)",
        fields: { day: dayName(day), maxBytes: this.#options.budget.maxBytes, reserveBytes: this.#options.budget.reserveBytes },
      });
    }
    this.#totals.discarded += records.length;
    return records;
  }

  /**
   * The writer of `day`, creating its file; beyond {@link OPEN_WRITERS}, the least recently used
   * other writer is closed. The new file gets its share of the room left, and deletes nothing:
   * the store's next {@link enforceLimits} does, after this batch.
   */
  #writerFor(day: number): DayWriter {
    let writer = this.#writers.get(day);
    if (writer) {
      this.#writers.delete(day); // re-inserted: the map's order is the order of use
      this.#writers.set(day, writer);
      return writer;
    }
    createDayFile(this.#options.dir, day, DAY_SCHEMA);
    this.#days = undefined;
    writer = new DayWriter(this.#options.dir, day, walBytes(this.#options.budget), { shareBytes: this.#options.addressShareBytes });
    this.#writers.set(day, writer);
    for (const [other, idle] of this.#writers) {
      if (this.#writers.size <= OPEN_WRITERS) break;
      idle.close();
      this.#writers.delete(other);
    }
    this.#limitWriters(this.#room(this.#listed()), false);
    return writer;
  }

  /**
   * Whether `day` has no file, is older than every kept day, and the budget has no room: a file
   * made for it would be the first deleted.
   */
  #firstToGo(day: number): boolean {
    if (this.#writers.has(day)) return false;
    const days = this.#listed();
    return days.length > 0 && day < days.at(-1)! && this.#room(days) < MIN_ROOM_BYTES;
  }

  /**
   * The days that have a file, newest first: the folder as listed at most {@link RELIST_MS} ago
   * (or since this store made or deleted a file), so a batch does not list it every time.
   */
  #listed(): readonly number[] {
    const now = this.#now();
    if (this.#days === undefined || now - this.#listedAt > RELIST_MS) {
      this.#days = listDays(this.#options.dir);
      this.#listedAt = now;
      this.#sizes.clear();
    }
    return this.#days;
  }

  /** Bytes free on the disk, read at most once every {@link FREE_SPACE_MS}. */
  #freeBytes(): number {
    const now = this.#now();
    if (now - this.#freeAt > FREE_SPACE_MS) {
      this.#free = filesystemOf(this.#options.dir).freeBytes;
      this.#freeAt = now;
    }
    return this.#free;
  }

  /**
   * The bytes the day files in `days` may still grow by (negative when over the budget), with
   * {@link walBytes} set aside for each open writer's write-ahead log; sets `totals.bytes`.
   */
  #room(days: readonly number[]): number {
    let used = 0;
    for (const day of days) {
      // Only files open for writing change size; the others are measured once per listing.
      let bytes = this.#sizes.get(day);
      if (bytes === undefined || this.#writers.has(day)) this.#sizes.set(day, (bytes = dayBytes(this.#options.dir, day)));
      used += bytes;
    }
    this.#totals.bytes = used;
    return headroom(this.#options.budget, used, this.#freeBytes()) - this.#writers.size * walBytes(this.#options.budget);
  }

  /**
   * Lets each open writer's file grow by its share of `room` bytes (none when it is negative).
   * A full day stays full until an older day was deleted (`dropped`) or a quarter of the cap is
   * free again (the disk's reserve came back), so a log at its cap is not told "full" and
   * "storing again" by turns as small batches fit and large ones do not.
   */
  #limitWriters(room: number, dropped: boolean): void {
    const share = Math.max(0, room) / Math.max(1, this.#writers.size) / PAGE_BYTES;
    for (const writer of this.#writers.values()) {
      const pages = writer.db.pragma('page_count', { simple: true }) as number;
      writer.limitPages(pages + share);
    }
    if (dropped || room >= this.#options.budget.maxBytes / ROOM_AGAIN_SHARE) this.#fullDays.clear();
  }

  /** Folds each open writer's write-ahead log into its file. */
  #checkpointWriters(): void {
    for (const writer of this.#writers.values()) writer.checkpoint();
  }

  /** After records were discarded, a stored batch is told once. */
  #storingAgain(): void {
    if (!this.#discarding) return;
    this.#discarding = false;
    this.#options.notify?.({ level: 'info', message: 'access log storing again: there is room', fields: { discarded: this.#totals.discarded } });
  }

  /**
   * Which limit of the budget binds now, as last measured: ACCESS_LOG_MAX_SIZE, or the disk's
   * free space above its reserve, whichever leaves less room.
   */
  #limitReached(): BudgetDeletion['reason'] {
    const { maxBytes, reserveBytes } = this.#options.budget;
    return maxBytes - this.#totals.bytes <= this.#free - reserveBytes ? 'max_size' : 'disk_reserve';
  }

  /**
   * An address's records went over its share of `day`'s budget: warned once per address and day
   * (README "Where access-log records go": what to do about it), and counted.
   */
  #overShare(day: number, address: string): void {
    this.#totals.addressesOverShare++;
    this.#options.notify?.({
      level: 'warn',
      message: "access log: one client address filled its share of the day's budget; its further records today are summarised (one per service, minute and status class, with a count)",
      fields: { day: dayName(day), address, shareBytes: this.#options.addressShareBytes },
    });
  }

  /**
   * Deletes `day`'s file; days below `floor` are not written again. Expiry by age is routine
   * (info); a deletion to keep the budget is not (a flood can cause it): warned with the records
   * the day held, and told to {@link AccessLogStoreOptions.onBudgetDeletion}.
   */
  #drop(day: number, reason: DeletionReason, floor: number): void {
    const records = reason === 'retention' ? 0 : dayRecords(this.#options.dir, day);
    this.#writers.get(day)?.close();
    this.#writers.delete(day);
    deleteDayFile(this.#options.dir, day);
    this.#days = undefined;
    this.#sizes.delete(day);
    this.#freeAt = -Infinity;
    this.#floorDay = Math.max(this.#floorDay, floor);
    this.#totals.daysDeleted[reason]++;
    const message = 'access log: deleted a day of raw records';
    if (reason === 'retention') {
      this.#options.notify?.({ level: 'info', message, fields: { day: dayName(day), reason } });
      return;
    }
    this.#options.notify?.({ level: 'warn', message, fields: { day: dayName(day), reason, records } });
    this.#options.onBudgetDeletion?.({ day: dayName(day), records, reason });
  }
}
