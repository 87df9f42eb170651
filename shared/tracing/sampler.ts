/**
 * The sampling decision of OTEL_TRACES_SAMPLER (OpenTelemetry SDK configuration, "General SDK
 * Configuration"): made by the gateway itself before any span exists, so that a request not
 * sampled costs no span object at all.
 */

/** OTEL_TRACES_SAMPLER's values. */
export const SAMPLER_NAMES = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;
export type SamplerName = (typeof SAMPLER_NAMES)[number];

/** Decides whether a new span of `traceId` is recorded, given its parent's decision (undefined: a root). */
export type Sampler = (traceId: string, parentSampled: boolean | undefined) => boolean;

/**
 * The sampler `name` with OTEL_TRACES_SAMPLER_ARG `ratio` (0–1, for the `traceidratio` kinds).
 * `parentbased_*` follow a parent's decision and apply the rest to roots; the ratio is taken on
 * the trace id's last 8 hex digits (W3C Trace Context Level 2 makes the right-most bytes random),
 * so every process decides alike for one trace.
 */
export function createSampler(name: SamplerName, ratio: number): Sampler {
  const bound = Math.floor(Math.min(Math.max(ratio, 0), 1) * 0x100000000);
  const root: (traceId: string) => boolean = name.endsWith('always_on')
    ? () => true
    : name.endsWith('always_off')
      ? () => false
      : (traceId) => lastEightHex(traceId) < bound;
  if (!name.startsWith('parentbased_')) return (traceId) => root(traceId);
  return (traceId, parentSampled) => parentSampled ?? root(traceId);
}

/** The value of `traceId`'s last 8 hex digits (lowercase, as trace-context.ts and random-ids.ts make them), without a slice and parseInt on every request. */
function lastEightHex(traceId: string): number {
  let value = 0;
  for (let i = traceId.length - 8; i < traceId.length; i++) {
    const code = traceId.charCodeAt(i);
    value = value * 16 + (code <= 57 ? code - 48 : code - 87);
  }
  return value;
}
