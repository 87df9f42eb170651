import { hostname } from 'node:os';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { Logger } from '../../shared/logger.js';
import type { TargetHealthBook } from './target-health-book.js';

/** Between two reports of an unchanged state, in ms: well inside the admin plane's one-minute horizon. */
const REPORT_EVERY_MS = 5_000;
/** How long a change waits for others to join its report, in ms. */
const CHANGE_DELAY_MS = 100;

/**
 * Tells the admin plane what this proxy process sees of its targets (`GET
 * /api/services/:id/health`): the whole {@link TargetHealthBook} as a `TargetHealthReport` on the
 * event bus every 5 s and shortly after each change of state. A report that fails to go out
 * (Redis away) is logged at debug and replaced by the next. The process is named by host name and
 * process id, unique per process.
 */
export class TargetHealthReporter {
  readonly #bus: Pick<EventBus, 'publishTargetHealth'>;
  readonly #book: TargetHealthBook;
  readonly #logger: Logger;
  readonly #proxy = `${hostname()}:${process.pid}`;
  readonly #interval: NodeJS.Timeout;
  #pending: NodeJS.Timeout | undefined;

  constructor(bus: Pick<EventBus, 'publishTargetHealth'>, book: TargetHealthBook, logger: Logger) {
    this.#bus = bus;
    this.#book = book;
    this.#logger = logger;
    this.#interval = setInterval(() => this.#publish(), REPORT_EVERY_MS);
    this.#interval.unref();
  }

  /** A target changed state: report soon, with whatever else changes meanwhile. */
  changed(): void {
    if (this.#pending !== undefined) return;
    this.#pending = setTimeout(() => this.#publish(), CHANGE_DELAY_MS);
    this.#pending.unref();
  }

  close(): void {
    clearInterval(this.#interval);
    clearTimeout(this.#pending);
  }

  #publish(): void {
    clearTimeout(this.#pending);
    this.#pending = undefined;
    const report = { proxy: this.#proxy, at: Date.now(), services: this.#book.report() };
    this.#bus.publishTargetHealth(report).catch((error: unknown) => this.#logger.debug({ err: error }, 'target health report not sent'));
  }
}
