import type { AccessLogEntry } from '../../../shared/types.js';
import type { DiskBudget } from './disk-budget.js';

/**
 * Share of a day's budget (ACCESS_LOG_MAX_SIZE ÷ ACCESS_LOG_RETENTION_DAYS) that the records of one
 * client address may fill before its further records that day are summarised (README "Where
 * access-log records go"): one address alone cannot fill the log, so the budget never deletes
 * older days for it.
 */
export const ADDRESS_SHARE = 0.1;
/**
 * Bytes a stored record is taken to cost beside its path's characters: the 82–99 bytes a record
 * takes with its indexes and batch keys (day-schema.ts), rounded up.
 */
export const RECORD_BYTES = 100;
/** Addresses tallied per day; past it, the less busy half is forgotten (at most ~5 MB). */
const MAX_ADDRESSES = 100_000;
/** Summary records remembered per day, to add to; past it, the oldest are forgotten (at most ~1 MB). */
const MAX_SUMMARIES = 10_000;

/** The bytes of a day's budget one client address may fill: {@link ADDRESS_SHARE} of ACCESS_LOG_MAX_SIZE ÷ ACCESS_LOG_RETENTION_DAYS. */
export function addressShareBytes(budget: DiskBudget, retentionDays: number): number {
  return Math.floor((budget.maxBytes / retentionDays) * ADDRESS_SHARE);
}

/** The bytes `record` is taken to take once stored (a length-based estimate: {@link RECORD_BYTES} and its path). */
export function recordBytes(record: AccessLogEntry): number {
  return RECORD_BYTES + record.path.length;
}

/**
 * What one day file's writer (day-writer.ts) knows of each client address's share of the day:
 * the bytes its stored records take (an estimate, {@link recordBytes}), and, for an address over
 * its share, the summary record of each (service, minute, status class) that its further
 * records add to. Addresses are the day's dictionary codes. Counted since the day's file was
 * opened for writing (a restart of the admin process counts again from zero).
 *
 * What a write changes is pending until its transaction commits ({@link commit}); a rolled-back
 * write's changes are dropped ({@link rollback}), so a tally never counts a record twice and a
 * summary never names a record that was not stored.
 */
export class AddressShares {
  readonly #shareBytes: number;
  readonly #tallies = new Map<number, number>();
  readonly #summaries = new Map<string, number>();
  readonly #pendingTallies = new Map<number, number>();
  readonly #pendingSummaries = new Map<string, number>();

  /** `shareBytes`: what one address may fill in the day ({@link addressShareBytes}). */
  constructor(shareBytes: number) {
    this.#shareBytes = shareBytes;
  }

  /** Whether `address` has filled its share today: its further records are summarised. */
  isOver(address: number): boolean {
    return this.#tally(address) >= this.#shareBytes;
  }

  /**
   * Adds `bytes` of a stored record of `address` to its tally.
   * @returns true when this takes the address over its share (once a day per address).
   */
  charge(address: number, bytes: number): boolean {
    const before = this.#tally(address);
    this.#pendingTallies.set(address, before + bytes);
    return before < this.#shareBytes && before + bytes >= this.#shareBytes;
  }

  /** The id of the record that summarises `address`'s records of `service`, `minute` and status `cls`, if one is known. */
  summaryOf(address: number, service: number, minute: number, cls: number): number | undefined {
    const key = `${address} ${service} ${minute} ${cls}`;
    return this.#pendingSummaries.get(key) ?? this.#summaries.get(key);
  }

  /** Makes the record `id` the summary of `address`'s records of `service`, `minute` and status `cls`. */
  startSummary(address: number, service: number, minute: number, cls: number, id: number): void {
    this.#pendingSummaries.set(`${address} ${service} ${minute} ${cls}`, id);
  }

  /** Keeps the pending changes (their write committed), within the bounds on memory. */
  commit(): void {
    for (const [address, bytes] of this.#pendingTallies) this.#tallies.set(address, bytes);
    for (const [key, id] of this.#pendingSummaries) this.#summaries.set(key, id);
    this.rollback();
    if (this.#tallies.size > MAX_ADDRESSES) this.#keepBusiest();
    // The map's order is the order of insertion: the oldest summaries go first.
    for (const key of this.#summaries.keys()) {
      if (this.#summaries.size <= MAX_SUMMARIES) break;
      this.#summaries.delete(key);
    }
  }

  /** Drops the pending changes (their write rolled back). */
  rollback(): void {
    this.#pendingTallies.clear();
    this.#pendingSummaries.clear();
  }

  #tally(address: number): number {
    return this.#pendingTallies.get(address) ?? this.#tallies.get(address) ?? 0;
  }

  /** Forgets the less busy half of the addresses: an address over its share stays unless half the limit is over it too. */
  #keepBusiest(): void {
    const kept = [...this.#tallies].sort((a, b) => b[1] - a[1]).slice(0, MAX_ADDRESSES / 2);
    this.#tallies.clear();
    for (const [address, bytes] of kept) this.#tallies.set(address, bytes);
  }
}
