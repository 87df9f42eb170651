/**
 * admin/registry/service-health.ts on its own, on a clock the test moves: which reports count (the latest
 * per proxy, none older than a minute by its `at` or its arrival), a service's targets in the
 * registry's order, and the overall state's rule.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import type { TargetHealthEntry, TargetState } from '../../shared/types.js';
import { overallState, REPORT_MAX_AGE_MS, TargetHealthReports } from '../../admin/registry/service-health.js';
import { sampleService } from '../support/samples.js';

const T0 = Date.UTC(2026, 10, 25, 12, 0, 0);
const pool = sampleService(1, {
  targetUrl: 'http://b.internal',
  targets: [
    { url: 'http://b.internal', weight: 3 },
    { url: 'http://a.internal', weight: 1 },
  ],
});
const other = sampleService(2);

let now: number;
let bus: MemoryEventBus;
let reports: TargetHealthReports;

beforeEach(() => {
  now = T0;
  bus = new MemoryEventBus();
  reports = new TargetHealthReports(bus, () => now);
});

/** An entry of `url` in `state` since T0 - 1 s. */
const entry = (url: string, state: TargetState, lastError: string | null = null): TargetHealthEntry => ({ url, state, since: T0 - 1_000, lastError });

/** Publishes (the memory bus delivers at once) `proxy`'s report of `entries` for `pool`, made at `at`. */
const report = (proxy: string, entries: TargetHealthEntry[], at = now) => void bus.publishTargetHealth({ proxy, at, services: { [pool.id]: entries } });

/** `proxy → state` of each target of `pool`, in order. */
const seen = () => reports.of(pool).targets.map((target) => ({ url: target.url, state: target.state, proxies: target.proxies.map((p) => `${p.proxy}=${p.state}`) }));

describe('the overall state of a target', () => {
  const cases: Array<[TargetState[], TargetState]> = [
    [[], 'unknown'],
    [['unknown', 'unknown'], 'unknown'],
    [['healthy'], 'healthy'],
    [['healthy', 'unknown', 'healthy'], 'healthy'],
    [['healthy', 'healthy', 'ejected'], 'ejected'],
    [['healthy', 'unhealthy'], 'unhealthy'],
    [['ejected', 'ejected', 'unhealthy'], 'ejected'],
    [['unhealthy', 'unhealthy', 'ejected'], 'unhealthy'],
    [['ejected', 'unhealthy', 'healthy', 'healthy'], 'unhealthy'],
    [['unknown', 'ejected'], 'ejected'],
  ];
  for (const [states, expected] of cases) {
    it(`[${states.join(', ')}] → ${expected}`, () => assert.equal(overallState(states), expected));
  }
});

describe("a service's targets", () => {
  it("are the registry's, in its order with their weights; each unknown with no proxy before any report", () => {
    assert.deepEqual(reports.of(pool), {
      targets: [
        { url: 'http://b.internal', weight: 3, state: 'unknown', proxies: [] },
        { url: 'http://a.internal', weight: 1, state: 'unknown', proxies: [] },
      ],
    });
  });

  it('a service before pools has its one target, targetUrl with weight 1', () => {
    assert.deepEqual(reports.of(other), { targets: [{ url: other.targetUrl, weight: 1, state: 'unknown', proxies: [] }] });
  });

  it("carry each proxy's view, ordered by proxy, times as ISO 8601 UTC; entries of other urls and services are left out", () => {
    report('web-2:7', [entry('http://b.internal', 'ejected', 'ECONNREFUSED'), entry('http://gone.internal', 'unhealthy')]);
    report('web-1:3', [entry('http://b.internal', 'healthy'), entry('http://a.internal', 'healthy', 'timeout')]);
    void bus.publishTargetHealth({ proxy: 'web-3:1', at: now, services: { [other.id]: [entry('http://a.internal', 'unhealthy')] } });
    assert.deepEqual(reports.of(pool), {
      targets: [
        {
          url: 'http://b.internal',
          weight: 3,
          state: 'ejected',
          proxies: [
            { proxy: 'web-1:3', state: 'healthy', since: '2026-11-25T11:59:59.000Z', lastError: null },
            { proxy: 'web-2:7', state: 'ejected', since: '2026-11-25T11:59:59.000Z', lastError: 'ECONNREFUSED' },
          ],
        },
        { url: 'http://a.internal', weight: 1, state: 'healthy', proxies: [{ proxy: 'web-1:3', state: 'healthy', since: '2026-11-25T11:59:59.000Z', lastError: 'timeout' }] },
      ],
    });
  });
});

describe('which reports count', () => {
  it("a proxy's newer report replaces its earlier one; an older one delivered late is ignored", () => {
    report('web-1:3', [entry('http://b.internal', 'ejected')], T0 - 2_000);
    report('web-1:3', [entry('http://b.internal', 'healthy')], T0 - 1_000);
    report('web-1:3', [entry('http://b.internal', 'unhealthy')], T0 - 1_500);
    assert.deepEqual(seen()[0]!.proxies, ['web-1:3=healthy']);
  });

  it('a report a proxy no longer sends leaves its state: its targets go back to unknown', () => {
    report('web-1:3', [entry('http://b.internal', 'healthy')]);
    report('web-1:3', [entry('http://a.internal', 'healthy')]);
    assert.deepEqual(seen(), [
      { url: 'http://b.internal', state: 'unknown', proxies: [] },
      { url: 'http://a.internal', state: 'healthy', proxies: ['web-1:3=healthy'] },
    ]);
  });

  it('one made more than a minute ago is dropped on arrival; one made exactly a minute ago counts', () => {
    report('late:1', [entry('http://b.internal', 'ejected')], now - REPORT_MAX_AGE_MS - 1);
    report('edge:2', [entry('http://b.internal', 'healthy')], now - REPORT_MAX_AGE_MS);
    assert.deepEqual(seen()[0]!.proxies, ['edge:2=healthy']);
  });

  it('a report ages out by its `at` as the clock moves on', () => {
    report('web-1:3', [entry('http://b.internal', 'healthy')], now - 30_000);
    now += 30_000;
    assert.deepEqual(seen()[0]!.proxies, ['web-1:3=healthy']);
    now += 1;
    assert.deepEqual(seen()[0], { url: 'http://b.internal', state: 'unknown', proxies: [] });
  });

  it("a report ages out a minute after it arrived, whatever the proxy's clock said (one ahead of ours)", () => {
    report('ahead:1', [entry('http://b.internal', 'ejected')], now + 10 * 60_000);
    now += REPORT_MAX_AGE_MS;
    assert.deepEqual(seen()[0]!.proxies, ['ahead:1=ejected']);
    now += 1;
    assert.deepEqual(seen()[0]!.proxies, []);
  });

  it('after close, no report is taken any more; what was taken stays readable', () => {
    report('web-1:3', [entry('http://b.internal', 'healthy')]);
    reports.close();
    report('web-2:7', [entry('http://b.internal', 'ejected')]);
    assert.deepEqual(seen()[0]!.proxies, ['web-1:3=healthy']);
  });
});
