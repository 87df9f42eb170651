import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateLimit } from '../config/durations.js';
import type { RateLimitDecision, RateLimiter } from './rate-limiter.js';

const UNLIMITED: RateLimitDecision = { allowed: true, limit: 0, remaining: 0, resetMs: 0 };

/** One request waiting for its batch's decision. */
interface Waiter {
  resolve: (decision: RateLimitDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * A {@link RateLimiter} over any rate-limiter-flexible limiter (memory or Redis).
 *
 * Requests for the same key that arrive in one turn of the event loop are counted together: one
 * `consume(key, n)` for all n of them, sent from `setImmediate` (the check phase right after the
 * poll phase that read them, so no request waits for a later turn). The backend increments the
 * window's count atomically and answers with the count after the batch; the i-th request of the
 * batch (1-based) is then the (count − n + i)-th of the window and is allowed exactly when that is
 * within the limit: the same decisions as n separate consumes in arrival order, for one backend
 * round trip. And while a key's batch is with the backend, its next requests wait and go together
 * as the next batch once the answer is in (batches of a key never overlap, so arrival order holds
 * across them): a key costs at most one backend call per round trip, which under load from one
 * address (a NAT, a benchmark) turns a Redis command per request into one per several dozen, for
 * a wait of at most one round trip (well under a millisecond to a local Redis).
 *
 * rate-limiter-flexible resolves when the whole batch fits and rejects with a `RateLimiterRes`
 * when it does not; any other rejection is a broken backend, which is reported to `onFailure` and
 * allows the batch (a limiter must never take the gateway down); if `onFailure` throws, the
 * batch's requests reject with what it threw. A `limit` of null allows everything.
 */
export class FlexibleRateLimiter implements RateLimiter {
  readonly limit: RateLimit | null;
  readonly #limiter: RateLimiterAbstract | undefined;
  readonly #onFailure: (error: unknown) => void;
  /** Requests of this turn, by key; sent from setImmediate. */
  #batch = new Map<string, Waiter[]>();
  /** Keys with a batch at the backend, each with the requests that arrived since (maybe none). */
  readonly #inFlight = new Map<string, Waiter[]>();

  constructor(limit: RateLimit | null, limiter: RateLimiterAbstract | undefined, onFailure: (error: unknown) => void) {
    this.limit = limit;
    this.#limiter = limiter;
    this.#onFailure = onFailure;
  }

  consume(key: string): Promise<RateLimitDecision> {
    if (!this.#limiter || !this.limit) return Promise.resolve(UNLIMITED);
    return new Promise((resolve, reject) => {
      const waiters = this.#batch.get(key);
      if (waiters !== undefined) {
        waiters.push({ resolve, reject });
        return;
      }
      if (this.#batch.size === 0) setImmediate(this.#flush);
      this.#batch.set(key, [{ resolve, reject }]);
    });
  }

  readonly #flush = (): void => {
    const batch = this.#batch;
    this.#batch = new Map();
    for (const [key, waiters] of batch) {
      const held = this.#inFlight.get(key);
      if (held === undefined) void this.#send(key, waiters);
      else held.push(...waiters);
    }
  };

  /** Sends one batch of `key`, then the requests held back meanwhile, if any, as the next. */
  async #send(key: string, waiters: Waiter[]): Promise<void> {
    this.#inFlight.set(key, []);
    try {
      await this.#consumeBatch(key, waiters);
    } finally {
      const held = this.#inFlight.get(key)!;
      this.#inFlight.delete(key);
      if (held.length > 0) void this.#send(key, held);
    }
  }

  async #consumeBatch(key: string, waiters: Waiter[]): Promise<void> {
    let result: RateLimiterRes;
    try {
      result = await this.#limiter!.consume(key, waiters.length);
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) return this.#failBatch(waiters, refusal);
      result = refusal;
    }
    const points = this.limit!.points;
    const before = result.consumedPoints - waiters.length;
    for (let i = 0; i < waiters.length; i++) {
      const position = before + i + 1;
      waiters[i]!.resolve({ allowed: position <= points, limit: points, remaining: Math.max(0, points - position), resetMs: result.msBeforeNext });
    }
  }

  #failBatch(waiters: Waiter[], error: unknown): void {
    try {
      this.#onFailure(error);
    } catch (fatal) {
      for (const waiter of waiters) waiter.reject(fatal);
      return;
    }
    const allowed = { allowed: true, limit: this.limit!.points, remaining: this.limit!.points, resetMs: 0 };
    for (const waiter of waiters) waiter.resolve(allowed);
  }
}
