import { Registry, collectDefaultMetrics } from 'prom-client';

/**
 * A registry with Node's process metrics only (RSS, event-loop lag, GC): all a process without a
 * data plane exposes (the split-mode admin process), so it never shows request series it cannot fill.
 */
export function processMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}
