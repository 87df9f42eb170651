import type { Logger } from '../logger.js';
import type { AccessLogEntry } from '../types.js';

/**
 * Where the data plane hands access-log records (design.md §3.9). `write` never blocks the request
 * and never throws; records are shipped in batches. A bounded buffer drops (and counts) records only
 * when the pipeline behind it is down.
 */
export interface AccessLogSink {
  /** Accepts one record for the next batch. */
  write(record: AccessLogEntry): void;
  /** Ships everything buffered; resolves when it is stored (embedded) or handed off (Redis). */
  flush(): Promise<void>;
  /**
   * Stops taking records and ships what is buffered, retrying for a bounded time (5 s by default)
   * while the pipeline is down; whatever is still unshipped then is dropped and counted. Never
   * rejects. Records written after close are dropped and counted too.
   */
  close(): Promise<void>;
  /** Records shipped so far (stored, or handed to the pipeline). */
  readonly shipped: number;
  /** Records dropped so far: the buffer was full, or the sink closed before they could be shipped. */
  readonly dropped: number;
}

/**
 * Logs a closed sink's totals with `message`: at info, or at warn with how many records were lost
 * when any were dropped (an operator should see that a stop or an outage cost access-log records).
 */
export function logAccessLogTotals(logger: Logger, sink: AccessLogSink, message: string): void {
  const totals = { shipped: sink.shipped, dropped: sink.dropped };
  if (totals.dropped === 0) logger.info(totals, message);
  else logger.warn(totals, `${message}; ${totals.dropped} access-log records were dropped`);
}
