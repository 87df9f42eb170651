/**
 * Outlier detection and active-check verdicts of one pool (proxy/pool/target-health.ts,
 * proxy/pool/target-pool.ts), on the clock: when a failing target leaves rotation, for how long, that
 * the last target in rotation stays, and that a passing active check brings an ejected one back.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { GatewayMetrics } from '../../proxy/pipeline/gateway-metrics.js';
import { RouteTable } from '../../proxy/routing/route-table.js';
import { TargetHealthBook } from '../../proxy/pool/target-health-book.js';
import type { TargetPool } from '../../proxy/pool/target-pool.js';
import { createLogger } from '../../shared/logger.js';
import type { Service } from '../../shared/types.js';
import { sampleService } from '../support/samples.js';

const CHECK = { path: '/healthz', intervalSeconds: 10, timeoutMs: 1000, healthyThreshold: 2, unhealthyThreshold: 2, expectStatus: '2xx' };

function poolOf(overrides: Partial<Service>, book?: TargetHealthBook): TargetPool {
  const service = sampleService(1, {
    path: '/app',
    targets: [{ url: 'http://10.0.0.1:80', weight: 1 }, { url: 'http://10.0.0.2:80', weight: 1 }, { url: 'http://10.0.0.3:80', weight: 1 }],
    outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
    ...overrides,
  });
  const table = book === undefined ? new RouteTable([service]) : new RouteTable([service], undefined, { book, stickyKey: Buffer.alloc(32) });
  return table.lookup('/app')!.pool;
}

const fail = (pool: TargetPool, index: number, times = 1): void => {
  const target = pool.targets[index]!;
  for (let i = 0; i < times; i++) target.health.failed('ECONNREFUSED', () => pool.mayEject(target));
};
const states = (pool: TargetPool): string[] => pool.targets.map((target) => target.health.state);

describe('outlier detection', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('ejects a target at its maxFails-th failure within the window, for ejectSeconds', () => {
    const pool = poolOf({});
    fail(pool, 0, 2);
    assert.deepEqual(states(pool), ['healthy', 'healthy', 'healthy']);
    fail(pool, 0);
    assert.deepEqual(states(pool), ['ejected', 'healthy', 'healthy']);
    mock.timers.tick(29_999);
    assert.equal(pool.targets[0]!.health.state, 'ejected');
    mock.timers.tick(1);
    assert.equal(pool.targets[0]!.health.state, 'healthy');
  });

  it('does not eject for failures spread wider than the window', () => {
    const pool = poolOf({});
    for (let i = 0; i < 6; i++) {
      fail(pool, 0);
      mock.timers.tick(6_000);
    }
    assert.equal(pool.targets[0]!.health.state, 'healthy');
  });

  it('doubles the ejection on a repeat, and starts afresh after behaving as long', () => {
    const pool = poolOf({});
    fail(pool, 0, 3);
    mock.timers.tick(30_000);
    fail(pool, 0, 3); // straight back: 60 s
    mock.timers.tick(59_999);
    assert.equal(pool.targets[0]!.health.state, 'ejected');
    mock.timers.tick(1);
    assert.equal(pool.targets[0]!.health.state, 'healthy');
    mock.timers.tick(120_001); // longer than the next ejection (120 s) would last
    fail(pool, 0, 3);
    mock.timers.tick(30_000);
    assert.equal(pool.targets[0]!.health.state, 'healthy');
  });

  it('never ejects the last target in rotation, and then still picks among all', () => {
    const pool = poolOf({});
    fail(pool, 0, 3);
    fail(pool, 1, 3);
    fail(pool, 2, 30);
    assert.deepEqual(states(pool), ['ejected', 'ejected', 'healthy']);
    const input = { clientIp: '192.0.2.1', stickyId: undefined };
    assert.equal(pool.pick(input), pool.targets[2]);
    // tried the one left: the ejected ones are tried next, not nothing
    const next = pool.pick(input, [pool.targets[2]!]);
    assert.ok(next === pool.targets[0] || next === pool.targets[1]);
    assert.equal(pool.pick(input, [...pool.targets]), undefined);
  });

  it('ends an ejection at once when an active check passes', () => {
    const pool = poolOf({ healthCheck: CHECK });
    for (const target of pool.targets) target.health.checked(null, CHECK);
    fail(pool, 1, 3);
    assert.equal(pool.targets[1]!.health.state, 'ejected');
    pool.targets[1]!.health.checked(null, CHECK);
    assert.equal(pool.targets[1]!.health.state, 'healthy');
  });

  it('takes a target out after unhealthyThreshold failed checks, back after healthyThreshold passes', () => {
    const pool = poolOf({ healthCheck: CHECK });
    const health = pool.targets[0]!.health;
    assert.equal(health.state, 'unknown');
    assert.equal(health.available, true, 'targets take traffic before the first probe answers');
    health.checked('status 500', CHECK);
    assert.equal(health.state, 'healthy');
    health.checked('status 500', CHECK);
    assert.equal(health.state, 'unhealthy');
    assert.notEqual(pool.pick({ clientIp: '', stickyId: undefined }), pool.targets[0]);
    health.checked(null, CHECK);
    assert.equal(health.state, 'unhealthy');
    health.checked(null, CHECK);
    assert.equal(health.state, 'healthy');
    assert.equal(health.entry().lastError, 'status 500');
  });
});

describe('outlier detection at the edges', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  /** Asserts target `index` is ejected now, still is `ms` - 1 ms later, and is back at `ms`. */
  const assertEjectedFor = (pool: TargetPool, index: number, ms: number): void => {
    const health = pool.targets[index]!.health;
    assert.equal(health.state, 'ejected', 'ejected');
    mock.timers.tick(ms - 1);
    assert.equal(health.state, 'ejected', `still ejected after ${ms - 1} ms`);
    mock.timers.tick(1);
    assert.equal(health.state, 'healthy', `back after ${ms} ms`);
  };

  it('ejects for maxFails failures spanning exactly windowSeconds', () => {
    const pool = poolOf({});
    fail(pool, 0);
    mock.timers.tick(4_000);
    fail(pool, 0);
    mock.timers.tick(6_000); // the third 10 000 ms after the first
    fail(pool, 0);
    assert.equal(pool.targets[0]!.health.state, 'ejected');
  });

  it('does not eject for maxFails failures spanning windowSeconds and 1 ms, but counts the ones still inside', () => {
    const pool = poolOf({});
    fail(pool, 0);
    mock.timers.tick(4_000);
    fail(pool, 0);
    mock.timers.tick(6_001); // the third 10 001 ms after the first
    fail(pool, 0);
    assert.equal(pool.targets[0]!.health.state, 'healthy');
    mock.timers.tick(3_999); // the first has left the window; the second and third are inside
    fail(pool, 0);
    assert.equal(pool.targets[0]!.health.state, 'ejected', 'the last three failures within 10 s');
  });

  it('with maxFails 1, ejects at the first failure, but never the last target in rotation', () => {
    const pool = poolOf({ outlierDetection: { maxFails: 1, windowSeconds: 1, ejectSeconds: 5 } });
    fail(pool, 0);
    assert.deepEqual(states(pool), ['ejected', 'healthy', 'healthy']);
    fail(pool, 1);
    fail(pool, 2);
    assert.deepEqual(states(pool), ['ejected', 'ejected', 'healthy']);
    assertEjectedFor(pool, 0, 5_000);
  });

  it('caps an ejection that keeps doubling at 300 s', () => {
    const pool = poolOf({ outlierDetection: { maxFails: 1, windowSeconds: 10, ejectSeconds: 100 } });
    for (const seconds of [100, 200, 300, 300, 300]) {
      fail(pool, 0); // straight back after each ejection
      assertEjectedFor(pool, 0, seconds * 1000);
    }
  });

  it('lets an ejectSeconds longer than 300 s last as long, without doubling it', () => {
    const pool = poolOf({ outlierDetection: { maxFails: 1, windowSeconds: 10, ejectSeconds: 400 } });
    for (let i = 0; i < 3; i++) {
      fail(pool, 0);
      assertEjectedFor(pool, 0, 400_000);
    }
    const longest = poolOf({ outlierDetection: { maxFails: 1, windowSeconds: 10, ejectSeconds: 3600 } });
    fail(longest, 1);
    assertEjectedFor(longest, 1, 3_600_000);
    fail(longest, 1);
    assertEjectedFor(longest, 1, 3_600_000);
  });

  it('starts afresh after a capped run once the target behaves longer than the cap', () => {
    const pool = poolOf({ outlierDetection: { maxFails: 1, windowSeconds: 10, ejectSeconds: 100 } });
    for (const seconds of [100, 200, 300]) {
      fail(pool, 0);
      assertEjectedFor(pool, 0, seconds * 1000);
    }
    mock.timers.tick(299_999); // less than the next ejection (the cap) would last
    fail(pool, 0);
    assertEjectedFor(pool, 0, 300_000);
    mock.timers.tick(300_001);
    fail(pool, 0);
    assertEjectedFor(pool, 0, 100_000);
  });

  it('counts every failure as an error, ejecting or not, and requests and those in flight apart', () => {
    const pool = poolOf({});
    const [a, b, c] = pool.targets.map((target) => target.health);
    for (let i = 0; i < 5; i++) a!.requestSent();
    for (let i = 0; i < 3; i++) a!.requestSettled();
    assert.deepEqual([a!.requests, a!.active, a!.errors], [5, 2, 0]);
    fail(pool, 0, 2);
    assert.deepEqual([a!.requests, a!.active, a!.errors], [5, 2, 2], 'a failure is no request of its own');
    fail(pool, 0);
    assert.equal(a!.state, 'ejected');
    fail(pool, 0, 4); // failures while ejected (the pool's last resort, or a retry) count too
    assert.equal(a!.errors, 7);
    fail(pool, 1, 3);
    fail(pool, 2, 10); // the last in rotation: not ejected, but its errors count
    assert.deepEqual(states(pool), ['ejected', 'ejected', 'healthy']);
    assert.deepEqual([b!.errors, c!.errors], [3, 10]);
    assert.deepEqual([b!.requests, c!.requests, b!.active, c!.active], [0, 0, 0, 0]);
  });

  it('reports requests, errors and being in rotation in /metrics as the targets count them', async () => {
    const book = new TargetHealthBook(createLogger('silent', 'targets'));
    const pool = poolOf({}, book);
    const metrics = new GatewayMetrics();
    metrics.trackTargets(book);
    const [a, b] = pool.targets;
    // what the forwarder does for each attempt: sent, then failed or answered, then settled
    for (let i = 0; i < 4; i++) a!.health.requestSent();
    fail(pool, 0, 3);
    for (let i = 0; i < 4; i++) a!.health.requestSettled();
    b!.health.requestSent(); // still in flight
    const service = '00000000-0000-4000-8000-000000000001';
    const value = async (name: string, url: string): Promise<number | undefined> => {
      const metric = await metrics.registry.getSingleMetric(name)!.get();
      return metric.values.find((v) => v.labels.service === service && v.labels.target === url)?.value;
    };
    assert.equal(await value('gatehouse_target_requests_total', a!.url), 4);
    assert.equal(await value('gatehouse_target_errors_total', a!.url), 3);
    assert.equal(await value('gatehouse_target_healthy', a!.url), 0);
    assert.equal(await value('gatehouse_target_requests_total', b!.url), 1);
    assert.equal(await value('gatehouse_target_errors_total', b!.url), 0);
    assert.equal(await value('gatehouse_target_healthy', b!.url), 1);
    assert.equal(a!.health.active, 0);
    assert.equal(b!.health.active, 1);
    const text = await metrics.registry.metrics();
    assert.match(text, new RegExp(`gatehouse_target_errors_total\\{service="${service}",target="http://10\\.0\\.0\\.1:80"\\} 3\\n`));
    mock.timers.tick(30_000);
    assert.equal(await value('gatehouse_target_healthy', a!.url), 1, 'back in rotation once the ejection ends');
    assert.equal(await value('gatehouse_target_errors_total', a!.url), 3, 'errors are kept');
  });
});
