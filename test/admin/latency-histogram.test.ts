import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUCKET_COUNT, bucketOf, LATENCY_BOUNDS_MS, percentile } from '../../admin/access-log/latency-histogram.js';

/** The fixed latency buckets of the traffic rollups and the percentiles read from them. */

function histogram(values: number[]): number[] {
  const buckets = new Array<number>(BUCKET_COUNT).fill(0);
  for (const value of values) buckets[bucketOf(value)]!++;
  return buckets;
}

/** The exact q-quantile (nearest rank). */
function exact(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

describe('latency histogram', () => {
  it('bucket i holds times above bound i-1 up to bound i; the last one everything above 60 s', () => {
    assert.equal(bucketOf(0), 0);
    assert.equal(bucketOf(1), 0);
    assert.equal(bucketOf(2), 1);
    assert.equal(bucketOf(4), 3);
    assert.equal(bucketOf(5), 3);
    assert.equal(bucketOf(6), 4);
    assert.equal(bucketOf(60_000), LATENCY_BOUNDS_MS.length - 1);
    assert.equal(bucketOf(60_001), LATENCY_BOUNDS_MS.length);
    assert.equal(BUCKET_COUNT, 30);
    for (let i = 1; i < LATENCY_BOUNDS_MS.length; i++) {
      assert.ok(LATENCY_BOUNDS_MS[i]! > LATENCY_BOUNDS_MS[i - 1]!);
      if (LATENCY_BOUNDS_MS[i - 1]! >= 2) assert.ok(LATENCY_BOUNDS_MS[i]! / LATENCY_BOUNDS_MS[i - 1]! <= 1.67, 'log-spaced, ratio at most 1.67');
    }
  });

  it('no requests: no percentile', () => {
    assert.equal(percentile(new Array(BUCKET_COUNT).fill(0), 0.5), null);
  });

  it('every estimate lies within its bucket: off by at most 1 ms below 3 ms, 40 % above', () => {
    let seed = 42;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    for (let run = 0; run < 200; run++) {
      const scale = [5, 50, 500, 5000][run % 4]!;
      const values = Array.from({ length: 1 + (run % 50) * 7 }, () => Math.round(Math.exp(random() * Math.log(scale))) - 1);
      for (const q of [0.5, 0.95]) {
        const estimate = percentile(histogram(values), q)!;
        const truth = exact(values, q);
        const bucket = bucketOf(truth);
        const upper = LATENCY_BOUNDS_MS[bucket]!;
        const lower = bucket === 0 ? 0 : LATENCY_BOUNDS_MS[bucket - 1]!;
        assert.ok(estimate >= lower && estimate <= upper, `q=${q}: ${estimate} outside (${lower}, ${upper}] of ${truth}`);
        assert.ok(Math.abs(estimate - truth) <= Math.max(1, 0.4 * truth), `q=${q}: ${estimate} vs ${truth}`);
      }
    }
  });

  it('times above 60 s read as 60000', () => {
    assert.equal(percentile(histogram([120_000, 90_000]), 0.5), 60_000);
  });
});
