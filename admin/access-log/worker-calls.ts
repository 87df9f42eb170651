import { parentPort, Worker } from 'node:worker_threads';
import { errorCode } from '../../shared/error-code.js';

/** A call to a worker thread, numbered by the caller. */
interface CallMessage<Request> {
  id: number;
  request: Request;
}

/** A thread's answer to call `id`: its result, or the error it threw. */
type ReplyMessage<Result> = { id: number; result: Result } | { id: number; error: { message: string; code?: string } };

/** Something the thread says unasked (a log line, its counters). */
interface NoticeMessage<Notice> {
  notice: Notice;
}

/**
 * Calls into a worker thread that runs {@link serveCalls}: each call is a message, answered in
 * its own time; a thread that dies fails the calls it had, and the next call starts a new one.
 * The access log's writer and reader threads run this way, so that SQLite's synchronous work
 * never holds up the event loop that serves requests.
 */
export class WorkerCalls<Request, Result, Notice = never> {
  readonly #url: URL;
  readonly #workerData: unknown;
  readonly #onNotice: (notice: Notice) => void;
  readonly #pending = new Map<number, { resolve: (result: Result) => void; reject: (error: Error) => void }>();
  #worker: Worker | undefined;
  #nextId = 0;
  #onIdle: (() => void) | undefined;

  /** `url` is the thread's module; `workerData` what it starts with; notices go to `onNotice`. */
  constructor(url: URL, workerData: unknown, onNotice: (notice: Notice) => void = () => {}) {
    this.#url = url;
    this.#workerData = workerData;
    this.#onNotice = onNotice;
  }

  /** Starts the thread now rather than at the first call (for a thread with work of its own). */
  start(): void {
    this.#thread();
  }

  /**
   * Sends `request`; resolves with the thread's result.
   * @throws (rejects with) the error the thread's handler threw (its message and `code`), or
   *   an error saying the thread exited.
   */
  call(request: Request): Promise<Result> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#thread().postMessage({ id, request } satisfies CallMessage<Request>);
    });
  }

  /** Waits for the calls already made, then stops the thread. */
  async close(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined) return;
    if (this.#pending.size > 0) await new Promise<void>((resolve) => (this.#onIdle = resolve));
    this.#worker = undefined; // its exit is expected now
    await worker.terminate();
  }

  #thread(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(this.#url, { workerData: this.#workerData });
    worker.on('message', (message: ReplyMessage<Result> | NoticeMessage<Notice>) => {
      if ('notice' in message) this.#onNotice(message.notice);
      else this.#settle(message);
    });
    worker.on('error', (error) => this.#failAll(worker, error));
    worker.on('exit', (code) => this.#failAll(worker, new Error(`${this.#url.pathname.split('/').pop()} exited (${code})`)));
    this.#worker = worker;
    return worker;
  }

  #settle(reply: ReplyMessage<Result>): void {
    const waiter = this.#pending.get(reply.id);
    this.#pending.delete(reply.id);
    if ('error' in reply) waiter?.reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    else waiter?.resolve(reply.result);
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

/**
 * The thread's side of {@link WorkerCalls}: answers each call with `handle`'s result (awaited, in
 * the order the calls came when `handle` is synchronous), or the error it threw. `close` runs when
 * the thread's port closes.
 * @returns a function that sends a notice to the main thread.
 */
export function serveCalls<Request, Result, Notice = never>(
  handle: (request: Request) => Result | Promise<Result>,
  close: () => void = () => {},
): (notice: Notice) => void {
  const port = parentPort!;
  port.on('message', ({ id, request }: CallMessage<Request>) => {
    Promise.resolve()
      .then(() => handle(request))
      .then(
        (result) => port.postMessage({ id, result } satisfies ReplyMessage<Result>),
        (error: Error) => port.postMessage({ id, error: { message: error.message, code: errorCode(error) } } satisfies ReplyMessage<Result>),
      );
  });
  port.once('close', close);
  return (notice) => port.postMessage({ notice } satisfies NoticeMessage<Notice>);
}
