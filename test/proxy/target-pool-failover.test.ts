/**
 * A service's pool of targets losing targets (design.md §4.13), on the data plane alone
 * against real target processes (test/support/target-process.ts) killed with SIGKILL:
 * - under concurrent load, one of three killed: no GET fails; a POST fails only when it was in
 *   flight to the dead target, and every POST sent after the kill succeeds (a refused connection
 *   is retried for any method); the dead target is ejected and gets no more requests; once
 *   started again and passing its active check, it is back in rotation and gets traffic;
 * - requests one at a time: the dead target is tried exactly `maxFails` times, then never; without
 *   active checks it is back (and takes its share) once `ejectSeconds` have passed;
 * - a running target failing its active check (`/healthz` 503) gets no requests until it passes
 *   `healthyThreshold` checks again;
 * - every target dead: each request gets 503 `Service unavailable` at once, none hangs.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HealthCheck, OutlierDetection, Service } from '../../shared/types.js';
import { dataPlanePools } from '../support/pool-gateways.js';
import { ALL_DOWN_POOL_SETTINGS, allTargetsDown, FAILOVER_POOL_SETTINGS, killOneUnderLoad } from '../support/pool-scenarios.js';
import { eventually } from '../support/eventually.js';
import { runLoad } from '../support/pool-traffic.js';
import type { TargetProcess } from '../support/target-process.js';

const pools = dataPlanePools();

/** A `round_robin` pool service at `path` over `pool` with `settings`, the defaults otherwise (no active checks, 3 fails in 10 s eject for 30 s, 1 retry). */
function publishPool(path: string, pool: TargetProcess[], settings: { readonly healthCheck?: HealthCheck | null; readonly outlierDetection?: OutlierDetection; readonly retries?: number }): Promise<Service> {
  return pools.publish(path, pool, {
    loadBalancing: 'round_robin',
    healthCheck: settings.healthCheck ?? null,
    outlierDetection: settings.outlierDetection ?? { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
    retries: settings.retries ?? 1,
  });
}

describe('a pool of three targets, one killed (SIGKILL) under load', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it, and takes it back once its active check passes', async (t) => {
    const pool = await pools.targets(['a', 'b', 'c'], { delayMs: 15 });
    const svc = await publishPool('/failover', pool, FAILOVER_POOL_SETTINGS);
    await killOneUnderLoad(t, pools.view(svc, pools.client(12)), pool);
  });
});

describe('a pool of three targets, one killed, requests one at a time', () => {
  it('tries the dead target exactly maxFails times (each retried on a live one), then never again', async () => {
    const pool = await pools.targets(['d', 'e', 'f']);
    const [, , f] = pool as [TargetProcess, TargetProcess, TargetProcess];
    const svc = await publishPool('/eject', pool, { outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 } });
    const http = pools.client(1);
    const warm = await runLoad({ concurrency: 1, total: 30, maxMs: 10_000, send: (n) => http.send(`/eject/warm/${n}`) });
    assert.deepEqual(warm.map((reply) => reply.target).sort(), [...'d'.repeat(10), ...'e'.repeat(10), ...'f'.repeat(10)], 'round robin over three');
    const before = await pools.figures(svc, f);
    assert.deepEqual(before, { healthy: 1, requests: 10, errors: 0 });

    await f.kill();
    const replies = await runLoad({ concurrency: 1, total: 60, maxMs: 10_000, send: (n) => http.send(`/eject/after/${n}`) });
    assert.deepEqual(replies.filter((reply) => reply.status !== 200 || !['d', 'e'].includes(reply.target!)), [], 'every request answered by a live target');
    const after = await pools.figures(svc, f);
    assert.deepEqual(after, { healthy: 0, requests: 13, errors: 3 }, 'f tried 3 times (maxFails), each a failure, then ejected');
  });

  it('without active checks, an ejected target is back once ejectSeconds have passed', async () => {
    const pool = await pools.targets(['g', 'h', 'i']);
    const [, , i] = pool as [TargetProcess, TargetProcess, TargetProcess];
    const svc = await publishPool('/expire', pool, { outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 2 } });
    const http = pools.client(1);
    await i.kill();
    const failing = await runLoad({ concurrency: 1, total: 30, maxMs: 10_000, send: (n) => http.send(`/expire/down/${n}`) });
    assert.deepEqual(failing.filter((reply) => reply.status !== 200), []);
    assert.equal((await pools.figures(svc, i)).healthy, 0, 'ejected');
    const ejectedBy = failing.at(-1)!.endedAt;
    await i.restart();
    await eventually('i back in rotation', async () => (await pools.figures(svc, i)).healthy === 1, 5_000, 20);
    assert.ok(Date.now() - ejectedBy >= 1_000, `back ${Date.now() - ejectedBy} ms after the ejection, before ejectSeconds (2 s) had passed`);
    const back = await runLoad({ concurrency: 1, total: 30, maxMs: 10_000, send: (n) => http.send(`/expire/back/${n}`) });
    assert.deepEqual(back.filter((reply) => reply.status !== 200), []);
    assert.equal(back.filter((reply) => reply.target === 'i').length, 10, 'i takes its share again');
  });
});

describe('active health checks of a running target', () => {
  it('a target whose /healthz fails is taken out of rotation (it gets no requests) and comes back after healthyThreshold passing checks', async () => {
    const pool = await pools.targets(['j', 'k', 'l']);
    const [, k] = pool as [TargetProcess, TargetProcess, TargetProcess];
    const svc = await publishPool('/checked', pool, {
      healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 2, unhealthyThreshold: 2, expectStatus: '2xx' },
    });
    const http = pools.client(3);
    await eventually('k checked once', () => k.probes >= 1, 5_000);
    await k.set({ healthy: false });
    const failedProbes = k.probes;
    await eventually('k out of rotation', async () => (await pools.figures(svc, k)).healthy === 0, 6_000);
    assert.ok(k.probes - failedProbes >= 2, `out after ${k.probes - failedProbes} failing probes (unhealthyThreshold 2)`);
    const arrived = k.arrivals.length;
    const meanwhile = await runLoad({ concurrency: 3, total: 60, maxMs: 10_000, send: (n) => http.send(`/checked/out/${n}`) });
    assert.deepEqual(meanwhile.filter((reply) => reply.status !== 200 || reply.target === 'k'), [], 'answered by the others only');
    assert.equal(k.arrivals.length, arrived, 'requests reached k while out of rotation');

    await k.set({ healthy: true });
    const passingFrom = k.probes;
    await eventually('k back in rotation', async () => (await pools.figures(svc, k)).healthy === 1, 6_000);
    assert.ok(k.probes - passingFrom >= 2, `back after ${k.probes - passingFrom} passing probes (healthyThreshold 2)`);
    const back = await runLoad({ concurrency: 3, total: 60, maxMs: 10_000, send: (n) => http.send(`/checked/back/${n}`) });
    assert.deepEqual(back.filter((reply) => reply.status !== 200), []);
    assert.ok(back.filter((reply) => reply.target === 'k').length >= 15, 'k takes its share again');
  });
});

describe('a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once (GET and POST, one at a time and concurrently)', async () => {
    const pool = await pools.targets(['x', 'y', 'z']);
    const svc = await publishPool('/alldown', pool, ALL_DOWN_POOL_SETTINGS);
    await allTargetsDown(pools.view(svc, pools.client(10)), pool);
  });
});
