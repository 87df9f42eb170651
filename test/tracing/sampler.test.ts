/**
 * OTEL_TRACES_SAMPLER's samplers (shared/tracing/sampler.ts; OpenTelemetry SDK configuration):
 * `always_on`/`always_off`, `traceidratio` deciding on the trace id's last 8 hex digits (so every
 * process decides alike for a trace), and the `parentbased_` kinds following a parent's decision.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newTraceId } from '../../shared/tracing/random-ids.js';
import { createSampler, SAMPLER_NAMES } from '../../shared/tracing/sampler.js';

/** A trace id whose last 8 hex digits are `tail`. */
const endingIn = (tail: string) => `${'a'.repeat(24)}${tail}`;
const RANDOM_TRACES = Array.from({ length: 10_000 }, newTraceId);

describe('root decisions', () => {
  it('always_on keeps every trace and always_off none, whatever the ratio or a parent', () => {
    const on = createSampler('always_on', 0);
    const off = createSampler('always_off', 1);
    for (const traceId of RANDOM_TRACES.slice(0, 100)) {
      assert.deepEqual([on(traceId, undefined), on(traceId, false)], [true, true]);
      assert.deepEqual([off(traceId, undefined), off(traceId, true)], [false, false]);
    }
  });

  it('traceidratio 0 keeps none and 1 keeps every trace, the extreme ids included', () => {
    const none = createSampler('traceidratio', 0);
    const all = createSampler('traceidratio', 1);
    for (const traceId of [...RANDOM_TRACES, endingIn('00000000'), endingIn('ffffffff')]) {
      assert.equal(none(traceId, undefined), false);
      assert.equal(all(traceId, undefined), true);
    }
  });

  it('traceidratio keeps a trace when its last 8 hex digits are under ratio × 2^32, ignoring a parent', () => {
    const half = createSampler('traceidratio', 0.5);
    assert.equal(half(endingIn('7fffffff'), undefined), true);
    assert.equal(half(endingIn('80000000'), undefined), false);
    assert.equal(half(endingIn('80000000'), true), false, 'not parent-based');
    assert.equal(half(`${'0'.repeat(24)}80000000`, undefined), half(`${'f'.repeat(24)}80000000`, undefined), 'the first 24 digits do not count');
  });

  it('traceidratio keeps about its ratio of random traces', () => {
    for (const ratio of [0.01, 0.25, 0.9]) {
      const sampler = createSampler('traceidratio', ratio);
      const kept = RANDOM_TRACES.filter((traceId) => sampler(traceId, undefined)).length / RANDOM_TRACES.length;
      // 10,000 draws: the standard deviation is at most 0.005; 0.03 is six of them.
      assert.ok(Math.abs(kept - ratio) < 0.03, `ratio ${ratio}: kept ${kept}`);
    }
  });

  it('a ratio outside 0–1 counts as its nearest bound', () => {
    assert.equal(createSampler('traceidratio', 2)(endingIn('ffffffff'), undefined), true);
    assert.equal(createSampler('traceidratio', -1)(endingIn('00000000'), undefined), false);
  });
});

describe('parent-based decisions', () => {
  it('follow a parent\'s decision, and decide a root as their root sampler does', () => {
    for (const name of SAMPLER_NAMES.filter((sampler) => sampler.startsWith('parentbased_'))) {
      const sampler = createSampler(name, 0.5);
      assert.equal(sampler(endingIn('ffffffff'), true), true, `${name}: a sampled parent`);
      assert.equal(sampler(endingIn('00000000'), false), false, `${name}: an unsampled parent`);
    }
    assert.equal(createSampler('parentbased_always_on', 0)(endingIn('ffffffff'), undefined), true);
    assert.equal(createSampler('parentbased_always_off', 1)(endingIn('00000000'), undefined), false);
    const ratio = createSampler('parentbased_traceidratio', 0.5);
    assert.deepEqual([ratio(endingIn('7fffffff'), undefined), ratio(endingIn('80000000'), undefined)], [true, false]);
  });
});
