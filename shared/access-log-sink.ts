import type { AccessLogEntry } from './types.js';

/**
 * Where the data plane hands access-log records (DESIGN §3.9). `write` never blocks the request
 * and never throws; records are shipped in batches. A bounded buffer drops (and counts) records only
 * when the pipeline behind it is down.
 */
export interface AccessLogSink {
  /** Accepts one record for the next batch. */
  write(record: AccessLogEntry): void;
  /** Ships everything buffered; resolves when it is stored (embedded) or handed off (Redis). */
  flush(): Promise<void>;
  /** Flushes, then stops the batch timer. Records written after close are dropped and counted. */
  close(): Promise<void>;
  /** Records shipped so far (stored, or handed to the pipeline). */
  readonly shipped: number;
  /** Records dropped so far because the buffer was full or the sink closed. */
  readonly dropped: number;
}
