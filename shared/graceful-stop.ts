import type { Logger } from './logger.js';

/**
 * The longest a Gatehouse process's stop may take, in ms, before it exits 1 anyway. Its steps are
 * bounded on their own (in-flight requests 10 s, access-log records 5 s, closing Redis about
 * 1.5 s), so only a step that overruns its bound reaches this; it stays well under the 30 s a
 * Kubernetes-style stop allows before SIGKILL (README "Stopping").
 */
export const STOP_DEADLINE_MS = 18_000;

export interface StopOnSignalsOptions {
  logger: Logger;
  /** The stop itself: run once, on the first signal; resolving means done (exit 0), throwing exit 1. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Signals that start it (default SIGTERM and SIGINT). */
  signals?: readonly NodeJS.Signals[];
  /** When the stop has not finished, in ms after the signal (default {@link STOP_DEADLINE_MS}). */
  deadlineMs?: number;
  /** Runs just before the deadline's exit (e.g. to kill child processes still running). */
  onDeadline?(): void;
}

/**
 * Runs `stop` on the first of `signals`, then exits 0; exits 1 if it throws, or if it has not
 * finished within `deadlineMs` (each logged). Later signals are ignored: `npm run` forwards the
 * SIGINT a terminal already sent to the whole process group, so a Ctrl+C arrives twice.
 */
export function stopOnSignals(options: StopOnSignalsOptions): void {
  const { logger, deadlineMs = STOP_DEADLINE_MS } = options;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    setTimeout(() => {
      logger.error({ deadlineMs }, 'stop did not finish in time; exiting');
      options.onDeadline?.();
      process.exit(1);
    }, deadlineMs);
    options.stop(signal).then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) process.on(signal, onSignal);
}
