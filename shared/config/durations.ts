/**
 * Parsers for the human forms used in configuration (design.md §6): durations such as `500ms`, `30s`,
 * `15m`, `8h`, `7d`, and rate limits such as `100/15m` (`0` turns a limiter off).
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const LIMIT = /^(\d+)\/(\d+(?:ms|s|m|h|d))$/;

/** A rate limit: `points` requests per `durationMs`. */
export interface RateLimit {
  points: number;
  durationMs: number;
}

/** Parses `<integer><ms|s|m|h|d>` into ms; returns undefined when malformed or zero. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * UNIT_MS[match[2]!]!;
  return ms > 0 && Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * Parses `<points>/<duration>` (for example `100/15m`). `0` means "no limit" and yields null;
 * a malformed value yields undefined.
 */
export function parseRateLimit(text: string): RateLimit | null | undefined {
  const trimmed = text.trim();
  if (trimmed === '0') return null;
  const match = LIMIT.exec(trimmed);
  if (!match) return undefined;
  const points = Number(match[1]);
  const durationMs = parseDuration(match[2]!);
  if (!points || durationMs === undefined) return undefined;
  return { points, durationMs };
}
