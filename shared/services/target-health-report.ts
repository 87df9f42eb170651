import * as v from 'valibot';
import type { TargetHealthReport, TargetState } from '../types.js';

/**
 * The shape of a {@link TargetHealthReport} as it arrives from another process (split mode: JSON
 * over Redis pub/sub), checked before anything reads it.
 */

/** Every {@link TargetState}, in the order the API documents them. */
export const TARGET_STATES: readonly TargetState[] = ['healthy', 'unhealthy', 'ejected', 'unknown'];

/** Epoch ms that `new Date(ms).toISOString()` accepts (ECMA-262 time values: at most 8.64e15). */
const epochMs = v.pipe(v.number(), v.finite(), v.minValue(0), v.maxValue(8.64e15));

const entry = v.object({
  url: v.string(),
  state: v.picklist(TARGET_STATES),
  since: epochMs,
  lastError: v.nullable(v.string()),
});

const report = v.object({
  proxy: v.pipe(v.string(), v.minLength(1)),
  at: epochMs,
  services: v.record(v.string(), v.array(entry)),
});

/**
 * `value` (parsed JSON from another process) as a report, with only the fields a report has
 * (unknown ones dropped, so a newer proxy's additions pass through an older admin); undefined when
 * it is not one: a field missing or of the wrong type, a state not in {@link TARGET_STATES}, a time
 * that is no epoch ms, an empty `proxy`.
 */
export function parseTargetHealthReport(value: unknown): TargetHealthReport | undefined {
  const result = v.safeParse(report, value);
  return result.success ? result.output : undefined;
}
