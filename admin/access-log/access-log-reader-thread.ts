/**
 * The access-log reader's thread (see access-log-reads.ts): answers page requests with
 * {@link AccessLogReader} over the day files. Not imported by the main thread.
 */
import { workerData } from 'node:worker_threads';
import type { AccessLogFilter } from './access-log-filter.js';
import { AccessLogReader, type AccessLogPage } from './access-log-reader.js';
import { serveCalls } from './worker-calls.js';

/** A page request: `GET /api/services/:id/logs`'s service, paging and filters. */
export interface ReaderRequest {
  serviceId: string;
  limit: number;
  offset: number;
  filter: AccessLogFilter;
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
