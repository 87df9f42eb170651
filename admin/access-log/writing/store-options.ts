import type { DiskBudget } from './disk-budget.js';

/** Something the store tells its owner about, to log (the writer thread has no logger of its own). */
export interface StoreNotice {
  level: 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/** Why a day's file was deleted: its age (ACCESS_LOG_RETENTION_DAYS), or the budget's limit that was reached. */
export type DeletionReason = 'retention' | 'max_size' | 'disk_reserve';

/** A day deleted to keep the budget (not by age): which day (`2025-01-31`), the records it held (rows), which limit. */
export interface BudgetDeletion {
  day: string;
  records: number;
  reason: Exclude<DeletionReason, 'retention'>;
}

export interface AccessLogStoreOptions {
  /** The folder of the day files (day-files.ts `accessLogDirOf`). */
  dir: string;
  /** ACCESS_LOG_RETENTION_DAYS: a day's file is deleted once its last ms is this many days old. */
  retentionDays: number;
  budget: DiskBudget;
  /**
   * Bytes of a day's records one client address may fill (address-shares.ts `addressShareBytes`)
   * before its further records that day are summarised; undefined: none are.
   */
  addressShareBytes?: number;
  /** Epoch ms now (tests move it). */
  now?: () => number;
  notify?: (notice: StoreNotice) => void;
  /** Told of each day deleted to keep the budget (the writer thread audits it), after its notice. */
  onBudgetDeletion?: (deletion: BudgetDeletion) => void;
}

/** What the store has done since it opened, in records (and the day files' size now). */
export interface StoreTotals {
  /** Stored as rows of their own. */
  stored: number;
  /** Added to the `count` of a summary record: their client address was over its share of the day. */
  summarised: number;
  /** Times a client address went over its share of a day's budget. */
  addressesOverShare: number;
  /** Skipped as re-deliveries of batches already stored. */
  duplicates: number;
  /** Not stored because their day had already expired (late, re-delivered after a long outage). */
  expired: number;
  /** Not stored because the access log reached ACCESS_LOG_MAX_SIZE or the disk's reserve with only newer days left. */
  discarded: number;
  /** Bytes the day files take on disk. */
  bytes: number;
  /** Day files kept. */
  days: number;
  /** Day files deleted, by reason. */
  daysDeleted: Record<DeletionReason, number>;
}
