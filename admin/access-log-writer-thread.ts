/**
 * The access-log writer's thread (see access-log-writer.ts): its own connection to the gateway's
 * SQLite file, storing each batch it is sent with {@link AccessLogStore.insertBatch} and replying
 * with the batch's id, or the error that rolled it back. Not imported by the main thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AccessLogEntry } from '../shared/types.js';
import { AccessLogStore } from './access-log-store.js';
import { openDatabase } from './database.js';

/** A batch to store, numbered by the sender. */
export interface WriterRequest {
  id: number;
  batch: AccessLogEntry[];
}

/** The outcome of request `id`: stored, or rolled back with `error`. */
export interface WriterReply {
  id: number;
  error?: { message: string; code?: string };
}

if (parentPort !== null && workerData?.path !== undefined) {
  const port = parentPort;
  const db = openDatabase(workerData.path as string);
  const store = new AccessLogStore(db);
  port.on('message', ({ id, batch }: WriterRequest) => {
    try {
      store.insertBatch(batch);
      port.postMessage({ id } satisfies WriterReply);
    } catch (error) {
      const { message, code } = error as Error & { code?: string };
      port.postMessage({ id, error: { message, code } } satisfies WriterReply);
    }
  });
  port.once('close', () => db.close());
}
