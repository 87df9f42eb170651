import type { Logger } from './logger.js';
import { describeError } from './error-code.js';

/**
 * Logs an outage once, not once per retry: the first failure as a warning, the first success after
 * it as info. Retry loops (version checks every 500 ms, shipments every 100 ms) call it freely.
 */
export class OutageLog {
  readonly #logger: Logger;
  readonly #down: string;
  readonly #up: string;
  #failing = false;

  /** `down` and `up` are the two messages, e.g. "cannot ship access logs" / "shipping again". */
  constructor(logger: Logger, down: string, up: string) {
    this.#logger = logger;
    this.#down = down;
    this.#up = up;
  }

  get failing(): boolean {
    return this.#failing;
  }

  failed(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#logger.warn({ err: describeError(error) }, this.#down);
  }

  succeeded(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#logger.info(this.#up);
  }
}
