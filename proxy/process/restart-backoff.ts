export interface RestartBackoffOptions {
  /** The first delay, in ms (default 100). */
  initialMs?: number;
  /** The longest delay, in ms (default 10,000). */
  maxMs?: number;
  /** Back to `initialMs` once the last restart is this old, in ms (default 60,000: a minute of stable running). */
  resetAfterMs?: number;
  /** The clock, in ms (default `Date.now`). */
  now?: () => number;
}

/**
 * How long the cluster primary waits before replacing a worker that died: 100 ms, doubling with
 * each restart up to 10 s, and back to 100 ms after a minute without one. A worker that crashes
 * on every request then costs a restart every 10 s, not a fork loop that starves the machine.
 */
export class RestartBackoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #resetAfterMs: number;
  readonly #now: () => number;
  #delayMs: number;
  #lastRestartAt: number | undefined;

  constructor(options: RestartBackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 100;
    this.#maxMs = options.maxMs ?? 10_000;
    this.#resetAfterMs = options.resetAfterMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    this.#delayMs = this.#initialMs;
  }

  /** The delay before the restart being scheduled now, in ms. */
  next(): number {
    const now = this.#now();
    if (this.#lastRestartAt !== undefined && now - this.#lastRestartAt >= this.#resetAfterMs) this.#delayMs = this.#initialMs;
    const delayMs = this.#delayMs;
    this.#delayMs = Math.min(delayMs * 2, this.#maxMs);
    this.#lastRestartAt = now + delayMs;
    return delayMs;
  }
}
