import type { AccessLogBatch } from '../../../shared/backends/access-log-batch.js';
import type { StoreNotice } from './store-options.js';
import type { WriterNotice, WriterOptions, WriterRequest, WriterTotals } from './writer-protocol.js';
import { WorkerCalls } from '../worker-calls.js';

/**
 * Where the admin plane stores access-log batches (the embedded sink's and the Redis stream
 * consumer's destination): a worker thread running {@link AccessLogStore}, so storing (about 12–16 µs of CPU
 * per record, milliseconds per batch), the retention and the rollups' upkeep never hold up this
 * thread's event loop: the proxied requests in embedded mode, the API and sign-ins in the admin
 * process.
 */
export interface AccessLogWriter {
  /**
   * Stores `batch`; resolves once it is committed (then readable by the reader thread), or once
   * its records were discarded because the access log is full (counted in {@link totals}).
   * @throws (rejects with) the SQLite error when the batch breaks the schema; a retry stores what is missing.
   */
  store(batch: AccessLogBatch): Promise<void>;
  /** The counters as of the last stored batch, or the thread's last report (every 2 s). */
  readonly totals: WriterTotals;
  /**
   * Waits for the batches already handed over, lets the export send what it holds (5 s at most
   * while its collector is away; then what is left is dropped and counted), then stops the thread.
   */
  close(): Promise<void>;
}

/**
 * Starts the writer thread for `options`; its notices (retention, a full access log, the export's
 * state) go to `onNotice`.
 */
export function openAccessLogWriter(options: WriterOptions, onNotice: (notice: StoreNotice) => void): AccessLogWriter {
  let totals: WriterTotals = {
    stored: 0, summarised: 0, addressesOverShare: 0, duplicates: 0, expired: 0, discarded: 0, bytes: 0, days: 0,
    daysDeleted: { retention: 0, max_size: 0, disk_reserve: 0 }, exported: 0, exportDropped: 0,
  };
  const calls = new WorkerCalls<WriterRequest, WriterTotals, WriterNotice>(new URL('./access-log-writer-thread.js', import.meta.url), options, (notice) => {
    if ('totals' in notice) totals = notice.totals;
    else onNotice(notice);
  });
  calls.start(); // its upkeep (retention, rollups, the move of an old table) runs without traffic too
  return {
    async store(batch) {
      totals = await calls.call({ json: batch.json });
    },
    get totals() {
      return totals;
    },
    async close() {
      totals = await calls.call({ close: true }).catch(() => totals);
      await calls.close();
    },
  };
}
