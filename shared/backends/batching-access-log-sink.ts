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
  /**
   * The batch of a shipment that failed, shipped again exactly as it was: the admin recognises a
   * re-delivered batch by its first record (access-log-store.ts), so a retry that took more
   * records, or fewer, after a shipment that did arrive (a Redis reply lost to a timeout) would be
   * stored twice, or in part not at all.
   */
  #unconfirmed: AccessLogEntry[] | undefined;
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
    if (this.#waiting() >= this.#maxBuffered && this.#buffer.length > 0) {
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
      while (this.#waiting() > 0 && !expired.signal.aborted) {
        await delay(this.#intervalMs, undefined, { signal: expired.signal }).catch(() => undefined);
        if (!expired.signal.aborted) await this.flush();
      }
    };
    const timedOut = new Promise<void>((resolve) => expired.signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([shipAll(), timedOut]);
    clearTimeout(timer);
    if (this.#waiting() === 0) return;
    this.#gaveUp = true;
    this.#dropped += this.#waiting();
    this.#buffer = [];
    this.#unconfirmed = undefined;
  }

  /** Records not shipped yet, an unconfirmed batch included. */
  #waiting(): number {
    return this.#buffer.length + (this.#unconfirmed?.length ?? 0);
  }

  /** Ships buffered records batch by batch; on failure keeps the batch and retries it, as it was, after an interval. */
  async #drain(): Promise<void> {
    while (this.#waiting() > 0) {
      const batch = (this.#unconfirmed ??= this.#buffer.splice(0, this.#maxBatch));
      try {
        await this.#ship(batch);
      } catch (error) {
        this.#onError(error);
        if (!this.#closed) this.#timer ??= setTimeout(() => void this.flush(), this.#intervalMs);
        return;
      }
      if (this.#gaveUp) return;
      this.#unconfirmed = undefined;
      this.#shipped += batch.length;
    }
  }
}
