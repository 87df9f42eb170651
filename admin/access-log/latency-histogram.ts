/**
 * Fixed-bucket latency histograms for the traffic rollups: each minute stores how many requests
 * fell into each bucket, and percentiles are read from merged buckets, so p50/p95 over an hour or
 * a day never touch the raw access log.
 *
 * 30 buckets, log-spaced on a 1-2-3-5-7 ladder from 1 ms to 60 s: bucket i counts response times
 * `t` (whole ms) with `BOUNDS[i-1] < t <= BOUNDS[i]`; the last bucket counts everything above
 * 60 s. Neighbouring bounds differ by a factor of at most 1.67 from 2 ms up, so a percentile read
 * from the buckets lies in the true value's bucket: off by at most 1 ms below 3 ms and by at most
 * 40 % of the value above (the bucket's width). Within a bucket the value is interpolated.
 *
 * The bounds are part of the schema (one `lat_NN` column each in `access_rollups`, migration 2):
 * changing them needs a new migration.
 */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000, 1500, 2000, 3000, 5000, 7000, 10000,
  15000, 20000, 30000, 45000, 60000,
];

/** Number of buckets: one per bound plus the overflow bucket (above the last bound). */
export const BUCKET_COUNT = LATENCY_BOUNDS_MS.length + 1;

/** The rollup column of bucket `i`: `lat_00` … `lat_29`. */
export const bucketColumn = (i: number): string => `lat_${String(i).padStart(2, '0')}`;

/** Every bucket column, in order. */
export const BUCKET_COLUMNS: readonly string[] = Array.from({ length: BUCKET_COUNT }, (_, i) => bucketColumn(i));

/** The bucket a response time (ms) falls into. */
export function bucketOf(ms: number): number {
  let low = 0;
  let high = LATENCY_BOUNDS_MS.length;
  // First bound >= ms, by binary search; LATENCY_BOUNDS_MS.length when above every bound.
  while (low < high) {
    const mid = (low + high) >> 1;
    if (LATENCY_BOUNDS_MS[mid]! >= ms) high = mid;
    else low = mid + 1;
  }
  return low;
}

/**
 * The `q`-quantile (0 < q ≤ 1) of the response times counted in `buckets`, in whole ms, or null
 * when they count nothing. Within its bucket the value is interpolated linearly between the
 * bucket's bounds; in the overflow bucket it is the last bound (60000).
 */
export function percentile(buckets: ArrayLike<number>, q: number): number | null {
  let total = 0;
  for (let i = 0; i < buckets.length; i++) total += buckets[i]!;
  if (total === 0) return null;
  const rank = q * total;
  let before = 0;
  for (let i = 0; i < buckets.length; i++) {
    const count = buckets[i]!;
    if (count > 0 && before + count >= rank) {
      if (i >= LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const upper = LATENCY_BOUNDS_MS[i]!;
      return Math.round(lower + ((upper - lower) * (rank - before)) / count);
    }
    before += count;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}
