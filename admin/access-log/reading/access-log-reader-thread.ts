/**
 * The access-log reader's thread (see access-log-reads.ts): answers page requests with
 * {@link AccessLogReader} over the day files. Not imported by the main thread.
 */
import { setPriority } from 'node:os';
import { workerData } from 'node:worker_threads';
import type { AccessLogFilter } from './access-log-filter.js';
import { AccessLogReader } from './access-log-reader.js';
import { type AccessLogPage } from './access-log-page.js';
import { serveCalls } from '../worker-calls.js';

/** A page request: `GET /api/services/:id/logs`'s service, paging and filters. */
export interface ReaderRequest {
  serviceId: string;
  limit: number;
  offset: number;
  filter: AccessLogFilter;
}

/**
 * This thread's nice value: below the event loop that serves requests, so on a busy machine a
 * console's read waits for CPU rather than proxied requests (Linux keeps a nice value per thread;
 * `setPriority` with no pid sets the calling thread's). A read only answers a person; it has no
 * backlog to fall behind on.
 */
const READER_NICE = 10;
try {
  setPriority(READER_NICE);
} catch {
  // Not allowed here (a platform without per-thread priorities): reads run at the process's.
}

const reader = new AccessLogReader((workerData as { dir: string }).dir);
/** Day files are closed when idle, so a deleted day's disk space is not held by this thread. */
const IDLE_CLOSE_MS = 60_000;
let idle: NodeJS.Timeout | undefined;

serveCalls<ReaderRequest, AccessLogPage>(
  ({ serviceId, limit, offset, filter }) => {
    clearTimeout(idle);
    idle = setTimeout(() => reader.close(), IDLE_CLOSE_MS).unref();
    return reader.listForService(serviceId, limit, offset, filter);
  },
  () => reader.close(),
);
