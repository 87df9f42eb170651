/**
 * A service's pool of targets losing targets (issue 23, "Done when"), on the data plane alone
 * against real target processes (test/support/target-process.ts) killed with SIGKILL:
 * - under concurrent load, one of three killed: no GET fails; a POST fails only when it was in
 *   flight to the dead target, and every POST sent after the kill succeeds (a refused connection
 *   is retried for any method); the dead target is ejected and gets no more requests; once
 *   started again and passing its active check, it is back in rotation and gets traffic;
 * - requests one at a time: the dead target is tried exactly `maxFails` times, then never;
 * - every target dead: each request gets 503 `Service unavailable` at once, none hangs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HealthCheck, OutlierDetection, Service } from '../../shared/types.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { eventually } from '../support/eventually.js';
import { PoolClient, runLoad, targetFigures, type Reply, type TargetFigures } from '../support/pool-traffic.js';
import { service } from '../support/samples.js';
import { startTargetProcesses, type TargetProcess } from '../support/target-process.js';

let plane: TestDataPlane;
const targets: TargetProcess[] = [];
const clients: PoolClient[] = [];

before(async () => {
  plane = await startDataPlane();
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(targets.map((target) => target.close()));
  await plane?.close();
});

/** Starts targets `ids` for this file (closed after it). */
async function targetsFor(ids: string[], delayMs = 0): Promise<TargetProcess[]> {
  const started = await startTargetProcesses(ids, { delayMs });
  targets.push(...started);
  return started;
}

function client(connections: number): PoolClient {
  const made = new PoolClient(plane.origin, connections);
  clients.push(made);
  return made;
}

/** A pool service at `path` over `pool`, published with the others made so far. */
const published: Service[] = [];
async function publishPool(path: string, pool: TargetProcess[], settings: { healthCheck?: HealthCheck | null; outlierDetection?: OutlierDetection; retries?: number }): Promise<Service> {
  const made = service({
    path,
    targetUrl: pool[0]!.url,
    targets: pool.map((target) => ({ url: target.url, weight: 1 })),
    loadBalancing: 'round_robin',
    healthCheck: settings.healthCheck ?? null,
    outlierDetection: settings.outlierDetection ?? { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
    retries: settings.retries ?? 1,
  });
  published.push(made);
  await plane.publish(published);
  return made;
}

async function figures(serviceId: string, target: TargetProcess): Promise<TargetFigures> {
  return targetFigures(await plane.metrics.registry.metrics(), serviceId, target.url);
}

const summary = (replies: readonly Reply[]): string =>
  JSON.stringify(replies.slice(0, 5).map(({ id, method, status, target, error, text }) => ({ id, method, status, target, error, text: text.slice(0, 80) })));

describe('a pool of three targets, one killed (SIGKILL) under load', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it, and takes it back once its active check passes', async (t) => {
    const pool = await targetsFor(['a', 'b', 'c'], 15);
    const [a, b, c] = pool as [TargetProcess, TargetProcess, TargetProcess];
    // Active checks every second, but 10 failing ones before `unhealthy`: what takes the dead
    // target out here is outlier detection, and what brings it back is a passing check (the
    // ejection itself lasts a minute).
    const svc = await publishPool('/failover', pool, {
      healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 1, unhealthyThreshold: 10, expectStatus: 200 },
      outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
      retries: 1,
    });
    const http = client(12);
    let stop = false;
    const load = runLoad({
      concurrency: 12,
      total: 20_000,
      maxMs: 20_000,
      until: () => stop,
      // one request in four is a POST with a body
      send: (n) => (n % 4 === 3 ? http.send(`/failover/post/${n}`, { method: 'POST', body: `payload ${n}` }) : http.send(`/failover/get/${n}`)),
    });

    await eventually('b to have served 60 requests', () => b.arrivals.length >= 60, 10_000, 5);
    const killStarted = Date.now();
    await b.kill();
    const killed = Date.now();
    const arrivedAtDead = b.arrivedIds();

    await eventually('b out of rotation (gatehouse_target_healthy 0)', async () => (await figures(svc.id, b)).healthy === 0, 5_000);
    const ejected = await figures(svc.id, b);
    // Traffic goes on for a while: none of it reaches b any more.
    const liveBefore = a.arrivals.length + c.arrivals.length;
    await eventually('400 more requests after the ejection', () => a.arrivals.length + c.arrivals.length - liveBefore >= 400, 10_000, 10);
    stop = true;
    const replies = await load;
    const afterLoad = await figures(svc.id, b);

    const gets = replies.filter((reply) => reply.method === 'GET');
    const posts = replies.filter((reply) => reply.method === 'POST');
    assert.ok(gets.length > 300 && posts.length > 100, `load: ${gets.length} GETs, ${posts.length} POSTs`);
    assert.ok(gets.filter((reply) => reply.endedAt < killStarted).some((reply) => reply.target === 'b'), 'b served before the kill');

    // No GET failed: each was answered 200 by a live target (a GET in flight to b was retried).
    const failedGets = gets.filter((reply) => reply.status !== 200 || reply.target === undefined);
    assert.deepEqual(failedGets, [], `failed GETs: ${summary(failedGets)}`);
    const fromDead = replies.filter((reply) => reply.target === 'b' && reply.startedAt > killed);
    assert.deepEqual(fromDead, [], 'answered by b after it was killed');

    // A POST failed only when it was in flight when b was killed, and not because a live target
    // refused it; every POST sent after the kill succeeded.
    const failedPosts = posts.filter((reply) => reply.status !== 200);
    for (const reply of failedPosts) {
      assert.ok(reply.startedAt <= killed, `POST ${reply.id} failed (${reply.status} ${reply.text}) though sent ${reply.startedAt - killed} ms after the kill`);
      assert.ok(!a.arrivedIds().has(reply.id) && !c.arrivedIds().has(reply.id), `POST ${reply.id} reached a live target and failed`);
    }
    assert.ok(failedPosts.length <= 12, `at most the requests in flight fail: ${failedPosts.length}`);
    const postsAfterKill = posts.filter((reply) => reply.startedAt > killed);
    assert.ok(postsAfterKill.length > 60, `POSTs after the kill: ${postsAfterKill.length}`);
    assert.deepEqual(postsAfterKill.filter((reply) => reply.status !== 200), [], 'a POST after the kill failed');
    const inFlightToDead = failedPosts.filter((reply) => arrivedAtDead.has(reply.id)).length;
    t.diagnostic(`${gets.length} GETs, ${posts.length} POSTs; ${failedPosts.length} POSTs failed (${inFlightToDead} seen arriving at b); b: ${JSON.stringify(ejected)} at ejection, ${JSON.stringify(afterLoad)} after the load`);

    // Ejected: out of rotation, and not one attempt more went to it after that.
    assert.equal(afterLoad.healthy, 0);
    assert.equal(afterLoad.requests, ejected.requests, 'attempts to b after its ejection');
    // Ejected within maxFails: the failures counted are the requests in flight to b when it died
    // and at most maxFails (3) attempts after, give or take those sent together with the third.
    const inFlightAtKill = [...arrivedAtDead].filter((id) => !replies.some((reply) => reply.id === id && reply.target === 'b')).length;
    const refusedAttempts = ejected.requests! - b.arrivals.filter((arrival) => arrival.run === 0).length;
    assert.ok(refusedAttempts <= 3 + 12, `${refusedAttempts} attempts to b after it died`);
    assert.ok(ejected.errors! <= inFlightAtKill + refusedAttempts, `b errors ${ejected.errors}, in flight at the kill ${inFlightAtKill}, refused ${refusedAttempts}`);

    // b starts again on its port: its next active check passes, which ends the ejection at once,
    // and traffic reaches it again.
    const probesBefore = b.probes;
    await b.restart();
    const restarted = Date.now();
    await eventually('b back in rotation (gatehouse_target_healthy 1)', async () => (await figures(svc.id, b)).healthy === 1, 5_000);
    assert.ok(b.probes > probesBefore, 'a probe of the restarted b');
    const back = await runLoad({ concurrency: 3, total: 90, maxMs: 10_000, send: (n) => http.send(`/failover/back/${n}`) });
    assert.deepEqual(back.filter((reply) => reply.status !== 200), []);
    const toB = back.filter((reply) => reply.target === 'b').length;
    assert.ok(toB >= 20, `b answered ${toB} of 90 once back (${Date.now() - restarted} ms after its restart)`);
    assert.ok(b.arrivals.some((arrival) => arrival.run === 1), 'the restarted b got requests');
  });
});

describe('a pool of three targets, one killed, requests one at a time', () => {
  it('tries the dead target exactly maxFails times (each retried on a live one), then never again', async () => {
    const pool = await targetsFor(['d', 'e', 'f']);
    const [, , f] = pool as [TargetProcess, TargetProcess, TargetProcess];
    const svc = await publishPool('/eject', pool, { outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 } });
    const http = client(1);
    const warm = await runLoad({ concurrency: 1, total: 30, maxMs: 10_000, send: (n) => http.send(`/eject/warm/${n}`) });
    assert.deepEqual(warm.map((reply) => reply.target).sort(), [...'d'.repeat(10), ...'e'.repeat(10), ...'f'.repeat(10)], 'round robin over three');
    const before = await figures(svc.id, f);
    assert.deepEqual(before, { healthy: 1, requests: 10, errors: 0 });

    await f.kill();
    const replies = await runLoad({ concurrency: 1, total: 60, maxMs: 10_000, send: (n) => http.send(`/eject/after/${n}`) });
    assert.deepEqual(replies.filter((reply) => reply.status !== 200 || !['d', 'e'].includes(reply.target!)), [], 'every request answered by a live target');
    const after = await figures(svc.id, f);
    assert.deepEqual(after, { healthy: 0, requests: 13, errors: 3 }, 'f tried 3 times (maxFails), each a failure, then ejected');
  });
});

describe('a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once (GET and POST, one at a time and concurrently)', async () => {
    const pool = await targetsFor(['x', 'y', 'z']);
    const svc = await publishPool('/alldown', pool, {
      healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 1, unhealthyThreshold: 1, expectStatus: '2xx' },
      outlierDetection: { maxFails: 2, windowSeconds: 10, ejectSeconds: 30 },
    });
    const http = client(10);
    const up = await runLoad({ concurrency: 3, total: 9, maxMs: 5_000, send: (n) => http.send(`/alldown/up/${n}`) });
    assert.deepEqual(up.map((reply) => reply.status), Array(9).fill(200));
    await Promise.all(pool.map((target) => target.kill()));

    const check = (replies: readonly Reply[], what: string): void => {
      for (const reply of replies) {
        assert.equal(reply.status, 503, `${what} ${reply.method} ${reply.id}: ${reply.status} ${reply.error ?? reply.text}`);
        assert.deepEqual(JSON.parse(reply.text), { error: 'Service unavailable' });
        assert.match(String(reply.headers['content-type']), /^application\/json/);
        assert.ok(reply.endedAt - reply.startedAt < 1_000, `${what} ${reply.method} ${reply.id} took ${reply.endedAt - reply.startedAt} ms`);
      }
    };
    // One at a time, GETs and POSTs alternating: through the ejections (the last target in
    // rotation is never ejected) and the active checks' verdicts.
    const sequential = await runLoad({
      concurrency: 1,
      total: 30,
      maxMs: 15_000,
      send: (n) => (n % 2 ? http.send(`/alldown/one/${n}`, { method: 'POST', body: 'x' }) : http.send(`/alldown/one/${n}`)),
    });
    check(sequential, 'one at a time:');
    // Once the active checks have found every target down: still 503, still at once.
    await eventually('every target unhealthy', async () => {
      const text = await plane.metrics.registry.metrics();
      return pool.every((target) => targetFigures(text, svc.id, target.url).healthy === 0);
    }, 5_000);
    const concurrent = await runLoad({ concurrency: 10, total: 100, maxMs: 15_000, send: (n) => http.send(`/alldown/many/${n}`, n % 3 ? {} : { method: 'POST', body: 'y' }) });
    assert.equal(concurrent.length, 100);
    check(concurrent, 'concurrently:');
  });
});
