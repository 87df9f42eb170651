import { Worker } from 'node:worker_threads';
import { recordsOf, type AccessLogBatch } from '../../shared/backends/access-log-batch.js';
import type { Database } from '../database.js';
import { AccessLogStore } from './access-log-store.js';
import type { WriterReply, WriterRequest } from './access-log-writer-thread.js';

/**
 * Where the admin plane stores access-log batches (the embedded sink's and the Redis stream
 * consumer's destination): {@link AccessLogStore.insertBatch}, one transaction per batch with its
 * rollups, idempotent by event id.
 */
export interface AccessLogWriter {
  /**
   * Stores `batch`; resolves once it is committed (then readable through the main connection).
   * @throws (rejects with) the SQLite error when the batch breaks the schema; nothing of it is stored.
   */
  store(batch: AccessLogBatch): Promise<void>;
  /** Waits for the batches already handed over, then stops. */
  close(): Promise<void>;
}

/**
 * The writer for the database at `path`: a worker thread with its own SQLite connection (WAL lets
 * it write while this thread reads), so inserting a batch (about 7 µs per record, milliseconds per
 * batch) never holds up this thread's event loop: the proxied requests in embedded mode, the API
 * and console in the admin process. `:memory:` has no second connection: `db` writes in-thread.
 */
export function openAccessLogWriter(db: Database, path: string): AccessLogWriter {
  if (path === ':memory:') {
    const store = new AccessLogStore(db);
    return { store: async (batch) => store.insertBatch(recordsOf(batch)), close: async () => {} };
  }
  return new ThreadedAccessLogWriter(path);
}

/** Batches go to the thread in order and are acknowledged in order. */
class ThreadedAccessLogWriter implements AccessLogWriter {
  readonly #path: string;
  readonly #pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  #worker: Worker | undefined;
  #nextId = 0;
  /** Resolves {@link close}'s wait once nothing is pending. */
  #onIdle: (() => void) | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  store(batch: AccessLogBatch): Promise<void> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#thread().postMessage({ id, json: batch.json } satisfies WriterRequest);
    });
  }

  async close(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined) return;
    if (this.#pending.size > 0) await new Promise<void>((resolve) => (this.#onIdle = resolve));
    this.#worker = undefined; // its exit is expected now
    await worker.terminate();
  }

  /** The thread, started on first use and again after it died (its pending batches were rejected). */
  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(new URL('./access-log-writer-thread.js', import.meta.url), { workerData: { path: this.#path } });
    worker.on('message', (reply: WriterReply) => this.#settle(reply));
    worker.on('error', (error) => this.#failAll(worker, error));
    worker.on('exit', (code) => this.#failAll(worker, new Error(`access-log writer thread exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #settle(reply: WriterReply): void {
    const waiter = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    if (reply.error === undefined) waiter?.resolve();
    else waiter?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    if (this.#pending.size === 0) this.#onIdle?.();
  }

  #failAll(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = undefined;
    for (const { reject } of this.#pending.values()) reject(error);
    this.#pending.clear();
    this.#onIdle?.();
  }
}
