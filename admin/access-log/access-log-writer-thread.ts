/**
 * The access-log writer's thread (see access-log-writer.ts): its own connection to the gateway's
 * SQLite file, storing each batch it is sent with {@link AccessLogStore.insertBatch} and replying
 * with the batch's id, or the error that rolled it back. Not imported by the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { recordsOf, type AccessLogBatch } from '../../shared/backends/access-log-batch.js';
import { AccessLogStore } from './access-log-store.js';
import { openDatabase } from '../database.js';

/**
 * This connection's page cache, in KiB (`PRAGMA cache_size` takes a negative count as KiB):
 * SQLite's own default. better-sqlite3 builds SQLite with 16 MB, which an appending writer fills
 * with pages it never reads again: 17 MB of the embedded gateway's resident memory under load
 * (bench/README.md). Inserts touch only the right edges of the table and its indexes, which fit in
 * this many times over; the storing cost per record was the same with either (bench/access-log-ingest.ts).
 */
const WRITER_CACHE_KIB = 2_000;

/** A batch to store, numbered by the sender: its JSON texts (see {@link AccessLogBatch}: strings cross threads as one copy each). */
export interface WriterRequest {
  id: number;
  json: AccessLogBatch['json'];
}

/** The outcome of request `id`: stored, or rolled back with `error`. */
export interface WriterReply {
  id: number;
  error?: { message: string; code?: string };
}

if (parentPort !== null && workerData?.path !== undefined) {
  const port = parentPort;
  const db = openDatabase(workerData.path as string);
  db.pragma(`cache_size = -${WRITER_CACHE_KIB}`);
  const store = new AccessLogStore(db);
  port.on('message', ({ id, json }: WriterRequest) => {
    try {
      store.insertBatch(recordsOf({ json }));
      port.postMessage({ id } satisfies WriterReply);
    } catch (error) {
      const { message, code } = error as Error & { code?: string };
      port.postMessage({ id, error: { message, code } } satisfies WriterReply);
    }
  });
  port.once('close', () => db.close());
}
