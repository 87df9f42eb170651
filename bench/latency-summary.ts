/**
 * Latency percentiles of a load run from every response's latency, as both the paced generator
 * and the closed-loop clients of the load thread report them (`LoadCounts.latencyMs`).
 */
import type { LoadCounts } from './load.js';

/**
 * p50, p90, p99, max and mean of `latenciesMs` (ms, any order; sorted in place), each rounded to
 * 0.01 ms; all 0 when empty.
 */
export function latencySummary(latenciesMs: Float64Array): LoadCounts['latencyMs'] {
  const sorted = latenciesMs.sort();
  const at = (q: number) => round2(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / (sorted.length || 1);
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: round2(sorted[sorted.length - 1] ?? 0), mean: round2(mean) };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
