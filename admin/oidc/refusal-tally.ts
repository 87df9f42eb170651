import type { Logger } from '../../shared/logger.js';

/** How often at most a tally writes a line, in ms. */
const DEFAULT_INTERVAL_MS = 60_000;

/**
 * Logs refused requests of one kind (back-channel logouts) as at most one warning line per
 * interval, with counts per reason, so that anyone able to post junk cannot write log lines at the
 * rate they post (one line per refusal would let a loop fill the disk or drown other warnings).
 * - The first refusal after a quiet interval is logged at once, so a misconfigured provider shows
 *   up without waiting: `<what>: refused 1 request in the last minute`, with `reasons: { <reason>: 1 }`.
 * - Refusals after it, within the interval, are counted; at the interval's end one line gives
 *   their total and counts per reason, and the next interval starts counting. An interval with
 *   none writes nothing and ends the series.
 * Reasons must come from a fixed set (the checks' messages), never from the request, so the
 * counts stay small and nothing a caller sends reaches the log.
 */
export class RefusalTally {
  readonly #logger: Logger;
  readonly #what: string;
  readonly #intervalMs: number;
  readonly #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  /**
   * @param what the message's subject, e.g. `back-channel logout`.
   * @param intervalMs at most one line per this many ms; default 60,000.
   */
  constructor(logger: Logger, what: string, intervalMs = DEFAULT_INTERVAL_MS) {
    this.#logger = logger;
    this.#what = what;
    this.#intervalMs = intervalMs;
  }

  /** Counts one refusal for `reason`, logging it now when no line was written this interval. */
  refused(reason: string): void {
    if (this.#timer !== undefined) {
      this.#pending.set(reason, (this.#pending.get(reason) ?? 0) + 1);
      return;
    }
    this.#write(new Map([[reason, 1]]));
  }

  #write(counts: ReadonlyMap<string, number>): void {
    let total = 0;
    for (const count of counts.values()) total += count;
    const reasons = Object.fromEntries(counts);
    this.#logger.warn({ refused: total, reasons }, `${this.#what}: refused ${total} ${total === 1 ? 'request' : 'requests'} in the last minute`);
    // Unref'd: a pending tally must never keep the process from exiting (what it holds then is lost, at most a minute's counts).
    this.#timer = setTimeout(() => this.#endInterval(), this.#intervalMs).unref();
  }

  #endInterval(): void {
    this.#timer = undefined;
    if (this.#pending.size > 0) this.#write(this.#takePending());
  }

  #takePending(): Map<string, number> {
    const counts = new Map(this.#pending);
    this.#pending.clear();
    return counts;
  }
}
