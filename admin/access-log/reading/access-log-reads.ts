import type { AccessLogFilter } from './access-log-filter.js';
import type { AccessLogPage } from './access-log-page.js';
import type { ReaderRequest } from './access-log-reader-thread.js';
import { WorkerCalls } from '../worker-calls.js';

/**
 * The access log's pages for the API and the console, read by a worker thread
 * ({@link AccessLogReader} there): a read of a large log never holds up the event loop that
 * serves proxied requests (embedded) or sign-ins (the admin process).
 */
export interface AccessLogReads {
  /**
   * One page of a service's access log, newest first, with its total (access-log-reader.ts).
   * @throws (rejects with) the SQLite error of a day file that cannot be read.
   */
  listForService(serviceId: string, limit: number, offset: number, filter?: AccessLogFilter): Promise<AccessLogPage>;
  /** Stops the thread once the reads already asked for are answered. */
  close(): Promise<void>;
}

/** Reads the day files in `dir` on a thread of its own, started on the first read. */
export function openAccessLogReads(dir: string): AccessLogReads {
  const calls = new WorkerCalls<ReaderRequest, AccessLogPage>(new URL('./access-log-reader-thread.js', import.meta.url), { dir });
  return {
    listForService: (serviceId, limit, offset, filter = {}) => calls.call({ serviceId, limit, offset, filter }),
    close: () => calls.close(),
  };
}
