/**
 * What the main thread (access-log-writer.ts) and the writer thread (access-log-writer-thread.ts)
 * send each other: the options the thread starts with, the calls it serves, its counters and the
 * notices it sends unasked. Types only: neither side loads the other through this module.
 */
import type { StoreNotice, StoreTotals } from './store-options.js';
import type { DiskBudget } from './disk-budget.js';

/** What the writer thread starts with. */
export interface WriterOptions {
  /** The gateway's database (its rollups). */
  databasePath: string;
  /** The folder of the day files. */
  dir: string;
  retentionDays: number;
  budget: DiskBudget;
  /**
   * ACCESS_LOG_EXPORT=otlp: where the records go too, the URL as its text (a URL object reaches a
   * thread as `{}`: structured clone copies no accessors), and the most its buffer holds in bytes
   * (ACCESS_LOG_OTLP_BUFFER_SIZE; absent: the exporter's default); undefined: not exported.
   */
  export: { url: string; headers: Record<string, string>; bufferBytes?: number } | undefined;
}

/**
 * A batch to store: its JSON texts, one per shipped batch (strings cross threads as one copy
 * each); or the last call, which sends what the export holds before the thread is stopped.
 */
export type WriterRequest = { json: readonly string[] } | { close: true };

/** What the writer thread says unasked: a line to log, or its counters (every 2 s, so `/metrics` moves without traffic). */
export type WriterNotice = StoreNotice | { totals: WriterTotals };

/** The writer's counters, as of its last stored batch: the store's, and the export's (records). */
export type WriterTotals = StoreTotals & { exported: number; exportDropped: number };
