import { setTimeout as delay } from 'node:timers/promises';
import type { AccessLogSink } from './access-log-sink.js';
import type { AccessLogEntry } from '../types.js';

/**
 * How long {@link BatchingAccessLogSink.close} keeps trying to ship what is buffered, in ms: a
 * stopping process spends at most this on its access log (README "Stopping").
 */
export const ACCESS_LOG_CLOSE_TIMEOUT_MS = 5_000;

/** Ships one batch; throws (or rejects) when the pipeline is down, and the batch is kept for retry. */
export type ShipBatch = (batch: AccessLogEntry[]) => void | Promise<void>;

export interface BatchingOptions {
  /** Ship when this many records are buffered (default 500). */
  maxBatch?: number;
  /** Ship at least this often while records wait, in ms (default 100). */
  intervalMs?: number;
  /** Records held while shipping fails; beyond it the oldest are dropped and counted (default 100,000). */
  maxBuffered?: number;
  /** Told about each failed shipment (the batch stays buffered). */
  onError?: (error: unknown) => void;
  /**
   * How long `close()` keeps trying to ship, in ms (default {@link ACCESS_LOG_CLOSE_TIMEOUT_MS}):
   * failed shipments are retried every `intervalMs` until then, and what is left is dropped.
   */
  closeTimeoutMs?: number;
}

/**
 * An {@link AccessLogSink} that buffers records and hands them to `ship` in batches, off the
 * request path: every `intervalMs`, or as soon as `maxBatch` are waiting. The embedded mode ships to
 * the SQLite batch writer; the Redis mode to a stream. Shipments run one at a time, in order.
 */
export class BatchingAccessLogSink implements AccessLogSink {
  readonly #ship: ShipBatch;
  readonly #maxBatch: number;
  readonly #intervalMs: number;
  readonly #maxBuffered: number;
  readonly #onError: (error: unknown) => void;
  readonly #closeTimeoutMs: number;
  #buffer: AccessLogEntry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #shipping: Promise<void> = Promise.resolve();
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Set when close() gave up: a shipment still out is then neither confirmed nor counted twice. */
  #gaveUp = false;
  #shipped = 0;
  #dropped = 0;

  constructor(ship: ShipBatch, options: BatchingOptions = {}) {
    this.#ship = ship;
    this.#maxBatch = options.maxBatch ?? 500;
    this.#intervalMs = options.intervalMs ?? 100;
    this.#maxBuffered = options.maxBuffered ?? 100_000;
    this.#onError = options.onError ?? (() => {});
    this.#closeTimeoutMs = options.closeTimeoutMs ?? ACCESS_LOG_CLOSE_TIMEOUT_MS;
  }

  get shipped(): number {
    return this.#shipped;
  }

  get dropped(): number {
    return this.#dropped;
  }

  write(record: AccessLogEntry): void {
    if (this.#closed) {
      this.#dropped++;
      return;
    }
    if (this.#buffer.length >= this.#maxBuffered) {
      this.#buffer.shift();
      this.#dropped++;
    }
    this.#buffer.push(record);
    if (this.#buffer.length >= this.#maxBatch) void this.flush();
    else this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
  }

  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#shipping = this.#shipping.then(() => this.#drain());
    return this.#shipping;
  }

  /**
   * Stops taking records and ships what is buffered, retrying failed shipments every `intervalMs`
   * for at most `closeTimeoutMs`; then drops what is left, counting it in {@link dropped} (with
   * any shipment still out, which is unconfirmed). Never rejects; calling it again returns the
   * same promise.
   */
  close(): Promise<void> {
    this.#closed = true;
    return (this.#closing ??= this.#shipWithin(this.#closeTimeoutMs));
  }

  async #shipWithin(timeoutMs: number): Promise<void> {
    const expired = new AbortController();
    const timer = setTimeout(() => expired.abort(), timeoutMs);
    const shipAll = async () => {
      await this.flush();
      while (this.#buffer.length > 0 && !expired.signal.aborted) {
        await delay(this.#intervalMs, undefined, { signal: expired.signal }).catch(() => undefined);
        if (!expired.signal.aborted) await this.flush();
      }
    };
    const timedOut = new Promise<void>((resolve) => expired.signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([shipAll(), timedOut]);
    clearTimeout(timer);
    if (this.#buffer.length === 0) return;
    this.#gaveUp = true;
    this.#dropped += this.#buffer.length;
    this.#buffer = [];
  }

  /** Ships buffered records batch by batch; on failure keeps them and retries after an interval. */
  async #drain(): Promise<void> {
    while (this.#buffer.length > 0) {
      const batch = this.#buffer.slice(0, this.#maxBatch);
      try {
        await this.#ship(batch);
      } catch (error) {
        this.#onError(error);
        if (!this.#closed) this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
        return;
      }
      if (this.#gaveUp) return;
      this.#buffer.splice(0, batch.length);
      this.#shipped += batch.length;
    }
  }
}
