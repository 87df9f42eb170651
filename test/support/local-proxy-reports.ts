/**
 * The reports of a test gateway's in-process proxy plane (proxy/pool/target-health-reporter.ts), which
 * publishes every 5 s on the gateway's own event bus beside whatever a test publishes there (not a
 * test file itself).
 */
import { hostname } from 'node:os';
import type { EventBus } from '../../shared/backends/event-bus.js';

/** The in-process proxy plane's name in its reports: this test process's host name and id. */
export const LOCAL_PROXY = `${hostname()}:${process.pid}`;

/**
 * Resolves at the in-process proxy plane's next report on `bus`: the one after it is about 5 s
 * away, a window in which a service created now is named by no report.
 */
export function nextLocalReport(bus: EventBus): Promise<void> {
  return new Promise((resolve) => {
    const stop = bus.onTargetHealth((report) => {
      if (report.proxy !== LOCAL_PROXY) return;
      stop();
      resolve();
    });
  });
}
