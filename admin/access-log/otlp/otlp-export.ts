/**
 * The access-log export over OTLP/HTTP with JSON encoding (`ACCESS_LOG_EXPORT=otlp`), run in the
 * admin's access-log writer thread: records are buffered in memory and POSTed to the operator's
 * collector in batches, one request at a time and in order, retried while the collector is away
 * (OTLP specification, opentelemetry-proto docs/specification.md "OTLP/HTTP"). At least once: a
 * record leaves the buffer only once the collector has answered for it, or once the buffer, bounded
 * in bytes, needs its room for newer records.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { Client } from 'undici';
import { ACCESS_LOG_CLOSE_TIMEOUT_MS } from '../../../shared/backends/batching-access-log-sink.js';
import type { AccessLogEntry } from '../../../shared/types.js';
import { outcomeOf, type Outcome } from './otlp-answer.js';
import { toOtlpLogRecord } from './otlp-log-record.js';
import { recordBytes } from './record-bytes.js';

/** How the exporter tells the operator about its state changes: pino's (fields, message) with the level first. */
export type ExportLog = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>, message: string) => void;

/** Distinct partial-success reasons warned about at most, so that a collector varying its message cannot flood the log. */
const MAX_REJECTION_REASONS = 100;

/** The buffer's bound when none is given, in bytes (ACCESS_LOG_OTLP_BUFFER_SIZE's default, `64MB`). */
export const OTLP_BUFFER_BYTES_DEFAULT = 64_000_000;

/** A batch's share of the buffer's bound at most (by estimate), so that the batch being retried leaves room for newer records. */
const BATCH_SHARE_OF_BUFFER = 4;

/** How an {@link OtlpLogExporter} reaches its collector, what it tells the operator, and its limits. */
export interface OtlpLogExporterOptions {
  /** Where the batches are POSTed (see `otlpLogsUrl`). */
  url: URL;
  /** Sent with every request, names lowercased (see `parseOtlpHeaders`); their values are never logged: they may hold an API key. */
  headers: Record<string, string>;
  /** The name of a service id, undefined when unknown (`gatehouse.service.name` is then left out). Must not throw. */
  serviceName: (serviceId: string) => string | undefined;
  /** Told about state changes (collector away and back, buffer full, refusals), once each, never per record or retry. */
  log: ExportLog;
  /**
   * Bytes held at most, waiting (by the estimate of record-bytes.ts) or being sent (the request
   * body): past it the oldest waiting records are dropped and counted (default
   * {@link OTLP_BUFFER_BYTES_DEFAULT}).
   */
  maxBufferedBytes?: number;
  /** Records per request at most (default 2,000); and estimated bytes at most a quarter of `maxBufferedBytes`. */
  batchSize?: number;
  /** Longest wait before fewer than `batchSize` records are sent, in ms (default 1,000). */
  intervalMs?: number;
  /** Shortest wait before a retry, in ms (default 500). */
  minBackoffMs?: number;
  /** Longest wait before a retry, in ms, a `Retry-After` included (default 30,000). */
  maxBackoffMs?: number;
  /** Longest wait for a request's answer, in ms, before it is retried (default 10,000, exporter.md's timeout). */
  requestTimeoutMs?: number;
  /** Resource attributes of every record (default `{ 'service.name': 'gatehouse' }`). */
  resource?: Record<string, string>;
}

/** A batch taken off the buffer: how many records, and their OTLP/JSON request body, encoded once for all its retries. */
interface Batch {
  size: number;
  body: Uint8Array;
}

/** The first records of a queue that make a batch: how many, and their estimated bytes. */
interface BatchCut {
  size: number;
  bytes: number;
}

/**
 * Sends access-log records to an OTLP/HTTP collector as log records (see otlp-log-record.ts).
 * {@link offer} never blocks; a background sender POSTs batches of `batchSize` records, or fewer
 * after `intervalMs`. Network errors, timeouts and 429/502/503/504 are retried with exponential
 * backoff and full jitter (honouring `Retry-After`) while the batch stays at the head of the buffer;
 * any other refusal drops the batch. State changes are logged once each, not per request.
 */
export class OtlpLogExporter {
  readonly #client: Client;
  readonly #path: string;
  /** The collector as logged: origin and path, without the query or credentials a URL may carry. */
  readonly #collector: string;
  readonly #headers: Record<string, string>;
  readonly #serviceName: (serviceId: string) => string | undefined;
  readonly #log: ExportLog;
  readonly #maxBufferedBytes: number;
  readonly #batchSize: number;
  readonly #batchBytes: number;
  readonly #intervalMs: number;
  readonly #minBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #requestTimeoutMs: number;
  readonly #resource: Resource;
  /** Records offered and not yet in a batch, oldest first, and their estimated bytes (record-bytes.ts). */
  #waiting: AccessLogEntry[] = [];
  #waitingBytes = 0;
  /** The batch being sent or retried; it counts as buffered until the collector has answered for it. */
  #head: Batch | undefined;
  /** The running send loop, if any. */
  #sending: Promise<void> | undefined;
  /** Armed while fewer than `batchSize` records wait and none is being sent: when it fires, they go as a partial batch. */
  #timer: NodeJS.Timeout | undefined;
  /** The waiting records may go as a partial batch. */
  #due = false;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Aborted when close() gives up: ends the retry wait and the request in flight. */
  readonly #stop = new AbortController();
  #request: AbortController | undefined;
  /** When the collector stopped answering, while it is away (ms since epoch). */
  #unreachableSince: number | undefined;
  /** The buffer overflowed and has not drained to half its bytes since, and what it dropped meanwhile. */
  #full = false;
  #droppedWhileFull = 0;
  /** The status of the last refusal, until an acceptance: a run of them is logged once. */
  #lastRefusal: number | undefined;
  readonly #rejectionReasons = new Set<string>();
  #exported = 0;
  #dropped = 0;

  constructor(options: OtlpLogExporterOptions) {
    this.#client = new Client(options.url.origin);
    this.#path = options.url.pathname + options.url.search;
    this.#collector = options.url.origin + options.url.pathname;
    // Ours last: a content-type among the configured headers would mislabel the JSON body.
    this.#headers = { ...options.headers, 'content-type': 'application/json' };
    this.#serviceName = options.serviceName;
    this.#log = options.log;
    this.#maxBufferedBytes = options.maxBufferedBytes ?? OTLP_BUFFER_BYTES_DEFAULT;
    this.#batchSize = options.batchSize ?? 2_000;
    this.#batchBytes = this.#maxBufferedBytes / BATCH_SHARE_OF_BUFFER;
    this.#intervalMs = options.intervalMs ?? 1_000;
    this.#minBackoffMs = options.minBackoffMs ?? 500;
    this.#maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.#resource = resourceFromAttributes(options.resource ?? { 'service.name': 'gatehouse' });
  }

  /** Records the collector accepted (a partial success's rejected ones excluded). */
  get exported(): number {
    return this.#exported;
  }

  /** Records lost: dropped from a full buffer (the oldest) or offered after close(), refused or rejected by the collector, or left at close(). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Records held: waiting, and being sent or retried. */
  get buffered(): number {
    return this.#waiting.length + (this.#head?.size ?? 0);
  }

  /** Bytes held: the waiting records' estimate (record-bytes.ts) and the request body being sent or retried; at most `maxBufferedBytes` once offer() returns. */
  get bufferedBytes(): number {
    return this.#waitingBytes + (this.#head?.body.byteLength ?? 0);
  }

  /**
   * Takes `records` into the buffer; when it then holds more than `maxBufferedBytes`, the oldest
   * waiting records are dropped (the newest are worth more after an outage) and counted, the first
   * overflow logged as a warning (and the buffer's recovery, once it has drained to half its
   * bytes, as info). Once it returns the exporter holds the records: the caller may acknowledge
   * them at their source. Synchronous; never throws.
   */
  offer(records: readonly AccessLogEntry[]): void {
    if (this.#closed) {
      this.#dropped += records.length;
      return;
    }
    for (const record of records) {
      this.#waiting.push(record);
      this.#waitingBytes += recordBytes(record);
    }
    this.#trim();
    this.#schedule();
  }

  /**
   * Stops taking records (later offers are dropped and counted) and sends what is buffered,
   * retrying while the collector is away, for at most `timeoutMs` ms in all (default 5 s, the
   * access log's share of a stop: README "Stopping"; the request in flight is then aborted); what
   * is left is counted as dropped and logged as a warning. Never rejects;
   * calling it again returns the same promise. Its own timer is the exporter's only one that keeps
   * the process alive: whoever awaits close() wants that wait.
   */
  close(timeoutMs = ACCESS_LOG_CLOSE_TIMEOUT_MS): Promise<void> {
    return (this.#closing ??= this.#closeWithin(timeoutMs));
  }

  async #closeWithin(timeoutMs: number): Promise<void> {
    this.#closed = true;
    const deadline = setTimeout(() => {
      this.#stop.abort();
      this.#request?.abort(new Error('closed'));
    }, timeoutMs);
    this.#schedule();
    await this.#sending;
    clearTimeout(deadline);
    const left = this.buffered;
    if (left > 0) {
      this.#dropped += left;
      this.#waiting = [];
      this.#waitingBytes = 0;
      this.#head = undefined;
      this.#log('warn', { collector: this.#collector, dropped: left, timeoutMs }, 'access-log export closed before the OTLP collector took every record');
    }
    await this.#client.close();
  }

  /** Drops the oldest waiting records while the buffer holds more than its bound (the batch being sent stays: it may be in flight). */
  #trim(): void {
    let excess = this.bufferedBytes - this.#maxBufferedBytes;
    if (excess <= 0) return;
    let count = 0;
    for (; excess > 0 && count < this.#waiting.length; count++) {
      const bytes = recordBytes(this.#waiting[count]!);
      excess -= bytes;
      this.#waitingBytes -= bytes;
    }
    // One splice, not a shift per record: shifting a long array moves all of it each time.
    this.#waiting.splice(0, count);
    if (count > 0) this.#overflow(count);
  }

  /** Counts `count` records dropped from a full buffer; the first overflow since the buffer had room is logged, not each. */
  #overflow(count: number): void {
    this.#dropped += count;
    this.#droppedWhileFull += count;
    if (this.#full) return;
    this.#full = true;
    this.#log('warn', { collector: this.#collector, maxBufferedBytes: this.#maxBufferedBytes }, 'access-log export buffer full: the oldest records are dropped until the OTLP collector catches up');
  }

  /** A batch can go without waiting for the interval: `batchSize` records, or a batch's share of the buffer's bytes, are waiting. */
  #batchReady(): boolean {
    return this.#waiting.length >= this.#batchSize || this.#waitingBytes >= this.#batchBytes;
  }

  /** Starts the send loop when a batch is ready, or arms the timer after which a partial one is. */
  #schedule(): void {
    if (this.#sending !== undefined || this.#waiting.length === 0 || this.#stop.signal.aborted) return;
    if (this.#closed || this.#batchReady()) this.#startSending();
    else this.#timer ??= setTimeout(() => ((this.#due = true), this.#startSending()), this.#intervalMs).unref();
  }

  #startSending(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#sending = this.#sendBatches().then(() => {
      this.#sending = undefined;
      this.#schedule();
    });
  }

  async #sendBatches(): Promise<void> {
    let batch: Batch | undefined;
    while (!this.#stop.signal.aborted && (batch = this.#takeBatch()) !== undefined) await this.#deliver(batch);
  }

  /** Takes the next batch off the waiting records as the head: a full one, or a partial one once due or closing. */
  #takeBatch(): Batch | undefined {
    if (this.#waiting.length === 0 || (!this.#batchReady() && !this.#due && !this.#closed)) return undefined;
    this.#due = false;
    const { size, bytes } = this.#cutBatch();
    const logRecords = this.#waiting.splice(0, size).map((entry) => toOtlpLogRecord(entry, this.#resource, this.#serviceName(entry.serviceId)));
    this.#waitingBytes -= bytes;
    // The interface allows undefined for encoders that can fail; the JSON one always returns bytes.
    this.#head = { size, body: JsonLogsSerializer.serializeRequest(logRecords)! };
    // The body may be larger than its records' estimate (attribute names, characters of 2 bytes in UTF-8).
    this.#trim();
    return this.#head;
  }

  /** The oldest waiting records, up to `batchSize` and a batch's share of the buffer's bytes, at least one. */
  #cutBatch(): BatchCut {
    let size = 0;
    let bytes = 0;
    for (const record of this.#waiting) {
      const next = recordBytes(record);
      if (size === this.#batchSize || (size > 0 && bytes + next > this.#batchBytes)) break;
      size++;
      bytes += next;
    }
    return { size, bytes };
  }

  /** Sends `batch` until the collector answers for it, or close() gives up (the batch then stays the head). */
  async #deliver(batch: Batch): Promise<void> {
    for (let retries = 0; !this.#stop.signal.aborted; retries++) {
      const outcome = await this.#post(batch.body);
      if (outcome.kind !== 'retry') return this.#settle(batch, outcome);
      if (this.#stop.signal.aborted) return;
      this.#noteUnreachable(outcome.reason);
      const waitMs = outcome.retryAfterMs ?? this.#backoffMs(retries);
      await delay(waitMs, undefined, { signal: this.#stop.signal, ref: false }).catch(() => undefined);
    }
  }

  /** POSTs one request body; a failure to get an answer in time is an outcome too (retry). */
  async #post(body: Uint8Array): Promise<Outcome> {
    const request = (this.#request = new AbortController());
    const timer = setTimeout(() => request.abort(new Error(`no answer within ${this.#requestTimeoutMs} ms`)), this.#requestTimeoutMs).unref();
    try {
      const response = await this.#client.request({ path: this.#path, method: 'POST', headers: this.#headers, body, signal: request.signal });
      const answer = new Uint8Array(await response.body.arrayBuffer());
      return outcomeOf(response.statusCode, response.headers['retry-after'], answer, this.#maxBackoffMs);
    } catch (error) {
      return { kind: 'retry', reason: error instanceof Error ? error.message : String(error), retryAfterMs: undefined };
    } finally {
      clearTimeout(timer);
      this.#request = undefined;
    }
  }

  /** Ends the head batch on the collector's answer: counted as exported, rejected or refused. */
  #settle(batch: Batch, outcome: Exclude<Outcome, { kind: 'retry' }>): void {
    this.#head = undefined;
    this.#noteReachable();
    if (outcome.kind === 'refused') {
      this.#dropped += batch.size;
      // A wrong API key refuses every batch: one line per run of the same status, not per batch.
      if (outcome.status !== this.#lastRefusal) {
        this.#log('error', { collector: this.#collector, status: outcome.status, answer: outcome.answer, dropped: batch.size }, 'the OTLP collector refused access-log records: they are dropped');
      }
      this.#lastRefusal = outcome.status;
    } else {
      this.#lastRefusal = undefined;
      const rejected = Math.min(outcome.rejected, batch.size);
      this.#exported += batch.size - rejected;
      this.#dropped += rejected;
      if (rejected > 0 || outcome.reason !== undefined) this.#notePartialSuccess(rejected, outcome.reason);
    }
    this.#noteRoom();
  }

  /** Warns about a partial success once per reason the collector gives (specification.md "Partial Success"). */
  #notePartialSuccess(rejected: number, reason: string | undefined): void {
    const key = reason ?? '';
    if (this.#rejectionReasons.has(key) || this.#rejectionReasons.size >= MAX_REJECTION_REASONS) return;
    this.#rejectionReasons.add(key);
    this.#log('warn', { collector: this.#collector, rejected, reason }, 'the OTLP collector rejected part of a batch of access-log records (logged once per reason)');
  }

  #noteUnreachable(reason: string): void {
    if (this.#unreachableSince !== undefined) return;
    this.#unreachableSince = Date.now();
    this.#log('warn', { collector: this.#collector, reason }, 'OTLP collector unreachable: access-log records are kept and retried');
  }

  #noteReachable(): void {
    if (this.#unreachableSince === undefined) return;
    this.#log('info', { collector: this.#collector, unreachableMs: Date.now() - this.#unreachableSince }, 'OTLP collector reachable again');
    this.#unreachableSince = undefined;
  }

  /** Logs the end of an overflow once the buffer is down to half its bytes: a buffer hovering at full would otherwise log each batch. */
  #noteRoom(): void {
    if (!this.#full || this.bufferedBytes > this.#maxBufferedBytes / 2) return;
    this.#log('info', { collector: this.#collector, dropped: this.#droppedWhileFull }, 'access-log export buffer has room again');
    this.#full = false;
    this.#droppedWhileFull = 0;
  }

  /** The wait before retry number `retries` (from 0), in ms: drawn between minBackoffMs and a ceiling that doubles up to maxBackoffMs. */
  #backoffMs(retries: number): number {
    const ceiling = Math.min(this.#maxBackoffMs, this.#minBackoffMs * 2 ** retries);
    return this.#minBackoffMs + Math.random() * (ceiling - this.#minBackoffMs);
  }
}
