/**
 * Outlier detection and active-check verdicts of one pool (proxy/target-health.ts,
 * proxy/target-pool.ts), on the clock: when a failing target leaves rotation, for how long, that
 * the last target in rotation stays, and that a passing active check brings an ejected one back.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { RouteTable } from '../../proxy/routing/route-table.js';
import type { TargetPool } from '../../proxy/pool/target-pool.js';
import type { Service } from '../../shared/types.js';
import { sampleService } from '../support/samples.js';

const CHECK = { path: '/healthz', intervalSeconds: 10, timeoutMs: 1000, healthyThreshold: 2, unhealthyThreshold: 2, expectStatus: '2xx' };

function poolOf(overrides: Partial<Service>): TargetPool {
  const service = sampleService(1, {
    path: '/app',
    targets: [{ url: 'http://10.0.0.1:80', weight: 1 }, { url: 'http://10.0.0.2:80', weight: 1 }, { url: 'http://10.0.0.3:80', weight: 1 }],
    outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
    ...overrides,
  });
  return new RouteTable([service]).lookup('/app')!.pool;
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
