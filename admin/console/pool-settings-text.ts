import type { LoadBalancing } from '../../shared/types.js';

/**
 * A service's pool settings (design.md §4.13) as the console words them: the audit table's before/after
 * lines, the services table, the service form. Each takes `unknown` because the audit log's
 * details are read back from JSON (and may predate pools); a value of another shape reads as `—`.
 * service-conflicts.js words them the same way in the browser.
 */

/** How each balancing reads, in the form's order (service-validation.ts LOAD_BALANCING_METHODS). */
export const LOAD_BALANCING_LABELS: Readonly<Record<LoadBalancing, string>> = {
  round_robin: 'Round robin (weighted)',
  least_requests: 'Least requests',
  client_ip: 'Client IP (consistent hashing)',
  cookie: 'Sticky cookie',
};

const UNKNOWN = '—';

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** `http://a (weight 3), http://b`: each target's url, its weight unless 1. */
export function targetsText(targets: unknown): string {
  if (!Array.isArray(targets)) return UNKNOWN;
  return targets.map((target) => (isRecord(target) ? `${String(target.url)}${target.weight === 1 ? '' : ` (weight ${String(target.weight)})`}` : UNKNOWN)).join(', ');
}

/** The balancing's label, or the value as it is when it is none of them. */
export function loadBalancingText(method: unknown): string {
  return typeof method === 'string' && Object.hasOwn(LOAD_BALANCING_LABELS, method) ? LOAD_BALANCING_LABELS[method as LoadBalancing] : String(method ?? UNKNOWN);
}

/** `Off`, or `GET /healthz every 10 s, timeout 2000 ms, expects 2xx; healthy after 2, unhealthy after 3 in a row`. */
export function healthCheckText(check: unknown): string {
  if (check === null) return 'Off';
  if (!isRecord(check)) return UNKNOWN;
  const { path, intervalSeconds, timeoutMs, expectStatus, healthyThreshold, unhealthyThreshold } = check;
  return `GET ${String(path)} every ${String(intervalSeconds)} s, timeout ${String(timeoutMs)} ms, expects ${String(expectStatus)}; healthy after ${String(healthyThreshold)}, unhealthy after ${String(unhealthyThreshold)} in a row`;
}

/** `3 failures within 10 s eject for 30 s`. */
export function outlierDetectionText(detection: unknown): string {
  if (!isRecord(detection)) return UNKNOWN;
  const { maxFails, windowSeconds, ejectSeconds } = detection;
  return `${String(maxFails)} failures within ${String(windowSeconds)} s eject for ${String(ejectSeconds)} s`;
}

/** The wording of each pool field whose value is no plain text or number. */
export const POOL_FIELD_TEXT: Readonly<Record<string, (value: unknown) => string>> = {
  targets: targetsText,
  loadBalancing: loadBalancingText,
  healthCheck: healthCheckText,
  outlierDetection: outlierDetectionText,
};
