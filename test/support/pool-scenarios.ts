/**
 * The failure scenarios of a service's pool (issue 23, "Done when") as steps and assertions any
 * gateway can be put through, whether a data plane alone, the embedded gateway or the split
 * processes: what differs is only how the test reaches the gateway ({@link PoolGatewayView}).
 * The targets are real processes (target-process.ts).
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { eventually } from './eventually.js';
import { runLoad, type PoolClient, type Reply, type TargetFigures } from './pool-traffic.js';
import type { TargetProcess } from './target-process.js';

/** How a scenario reaches the gateway under test. */
export interface PoolGatewayView {
  /** Clients of its public listener(s): the load is spread over them in turn. */
  clients: PoolClient[];
  /** The pool service's prefix (`/failover`). */
  prefix: string;
  /** The target's figures in `/metrics`, one entry per proxy process (`gatehouse_target_*`). */
  figures(target: TargetProcess): Promise<TargetFigures[]>;
  /**
   * The target's state as `GET /api/services/:id/health` gives it, one per proxy process that
   * reported it; absent where there is no admin API (a data plane alone).
   */
  reportedStates?(target: TargetProcess): Promise<string[]>;
}

/** Sum of the attempts counted by every proxy process. */
const attemptsOf = (figures: readonly TargetFigures[]): number => figures.reduce((sum, f) => sum + (f.requests ?? 0), 0);
const errorsOf = (figures: readonly TargetFigures[]): number => figures.reduce((sum, f) => sum + (f.errors ?? 0), 0);
const outOfRotation = (figures: readonly TargetFigures[]): boolean => figures.length > 0 && figures.every((f) => f.healthy === 0);
const inRotation = (figures: readonly TargetFigures[]): boolean => figures.length > 0 && figures.every((f) => f.healthy === 1);

const summary = (replies: readonly Reply[]): string =>
  JSON.stringify(replies.slice(0, 5).map(({ id, method, status, target, error, text }) => ({ id, method, status, target, error, text: text.slice(0, 80) })));

/** The active check the kill scenario's service must have (and its outlier detection). */
export const FAILOVER_POOL_SETTINGS = {
  // Checks every second, but 10 failing ones before `unhealthy`: what takes the dead target out
  // is outlier detection, and what brings it back is a passing check (the ejection itself lasts a
  // minute).
  healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 1, unhealthyThreshold: 10, expectStatus: 200 },
  outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
  retries: 1,
} as const;

/**
 * Three targets `pool` (`round_robin`, weight 1 each, {@link FAILOVER_POOL_SETTINGS}) under
 * concurrent GETs and POSTs, the second one SIGKILLed mid-load:
 * - no GET fails: each is answered 200 by a live target (one in flight to the dead target is
 *   retried on another);
 * - a POST fails only when it was in flight when the target died, never after: a refused
 *   connection is retried for any method;
 * - the dead target is ejected (`gatehouse_target_healthy` 0 on every proxy process, and the
 *   health API says so) within `maxFails` failed attempts of each process, give or take those
 *   sent together, and gets no attempt more;
 * - started again on its port, its next active check brings it back at once
 *   (`gatehouse_target_healthy` 1, `healthy` in the health API), and traffic reaches it again.
 * Each target's answers take `delayMs` (≥ 10 ms, so requests are in flight when it dies).
 */
export async function killOneUnderLoad(t: TestContext, view: PoolGatewayView, pool: readonly TargetProcess[]): Promise<void> {
  const [a, b, c] = pool as [TargetProcess, TargetProcess, TargetProcess];
  const CONCURRENCY = 12;
  const proxies = view.clients.length;
  const path = (kind: string, n: number): string => `${view.prefix}/${kind}/${n}`;
  let stop = false;
  const load = runLoad({
    concurrency: CONCURRENCY,
    total: 20_000,
    maxMs: 25_000,
    until: () => stop,
    // one request in four is a POST with a body; the proxies in turn
    send: (n) => {
      const http = view.clients[n % proxies]!;
      return n % 4 === 3 ? http.send(path('post', n), { method: 'POST', body: `payload ${n}` }) : http.send(path('get', n));
    },
  });

  await eventually('b to have served 60 requests', () => b.arrivals.length >= 60, 15_000, 5);
  await b.kill();
  const killed = Date.now();
  const arrivedAtDead = b.arrivedIds();

  await eventually('b out of rotation on every proxy (gatehouse_target_healthy 0)', async () => outOfRotation(await view.figures(b)), 10_000);
  const ejected = await view.figures(b);
  // Traffic goes on for a while: none of it reaches b any more.
  const liveBefore = a.arrivals.length + c.arrivals.length;
  await eventually('400 more requests after the ejection', () => a.arrivals.length + c.arrivals.length - liveBefore >= 400, 15_000, 10);
  stop = true;
  const replies = await load;
  const afterLoad = await view.figures(b);

  const gets = replies.filter((reply) => reply.method === 'GET');
  const posts = replies.filter((reply) => reply.method === 'POST');
  const failedPosts = posts.filter((reply) => reply.status !== 200);
  const seenAtDead = failedPosts.filter((reply) => arrivedAtDead.has(reply.id)).length;
  t.diagnostic(`${gets.length} GETs, ${posts.length} POSTs; ${failedPosts.length} POSTs failed (${seenAtDead} seen arriving at b); b at its ejection: ${JSON.stringify(ejected)}, after the load: ${JSON.stringify(afterLoad)}`);
  assert.ok(gets.length > 300 && posts.length > 100, `load: ${gets.length} GETs, ${posts.length} POSTs`);
  assert.ok(gets.some((reply) => reply.endedAt < killed && reply.target === 'b'), 'b served before the kill');

  // No GET failed: each was answered 200 by a live target.
  const failedGets = gets.filter((reply) => reply.status !== 200 || reply.target === undefined);
  assert.deepEqual(failedGets, [], `failed GETs: ${summary(failedGets)}`);
  assert.deepEqual(replies.filter((reply) => reply.target === 'b' && reply.startedAt > killed), [], 'answered by b after it was killed');

  // A POST failed only when it was in flight when b died (it may have been sent to b before the
  // kill), never because a live target refused it; every POST sent after the kill succeeded.
  for (const reply of failedPosts) {
    assert.ok(reply.startedAt <= killed, `POST ${reply.id} failed (${reply.status} ${reply.error ?? reply.text}) though sent ${reply.startedAt - killed} ms after the kill`);
    assert.ok(!a.arrivedIds().has(reply.id) && !c.arrivedIds().has(reply.id), `POST ${reply.id} reached a live target and failed`);
  }
  assert.ok(failedPosts.length <= CONCURRENCY, `more POSTs failed (${failedPosts.length}) than were in flight`);
  const postsAfterKill = posts.filter((reply) => reply.startedAt > killed);
  assert.ok(postsAfterKill.length > 60, `POSTs after the kill: ${postsAfterKill.length}`);
  const failedAfterKill = postsAfterKill.filter((reply) => reply.status !== 200);
  assert.deepEqual(failedAfterKill, [], `POSTs after the kill failed: ${summary(failedAfterKill)}`);

  // Ejected: out of rotation on every proxy, not one attempt more after that, and within maxFails:
  // what failed is what was in flight to b when it died and at most maxFails (3) attempts a proxy
  // after, give or take those sent together with the third.
  assert.ok(outOfRotation(afterLoad));
  assert.equal(attemptsOf(afterLoad), attemptsOf(ejected), 'attempts to b after its ejection');
  const inFlightAtKill = [...arrivedAtDead].filter((id) => !replies.some((reply) => reply.id === id && reply.target === 'b')).length;
  const refusedAttempts = attemptsOf(ejected) - b.arrivals.filter((arrival) => arrival.run === 0).length;
  assert.ok(refusedAttempts <= proxies * (3 + CONCURRENCY), `${refusedAttempts} attempts to b after it died`);
  assert.ok(errorsOf(ejected) <= inFlightAtKill + refusedAttempts, `b errors ${errorsOf(ejected)}, in flight at the kill ${inFlightAtKill}, refused ${refusedAttempts}`);
  if (view.reportedStates) {
    await eventually('the health API to show b out of rotation on every proxy', async () => {
      const states = await view.reportedStates!(b);
      return states.length === proxies && states.every((state) => state === 'ejected' || state === 'unhealthy');
    }, 10_000);
    for (const live of [a, c]) assert.deepEqual(await view.reportedStates(live), Array(proxies).fill('healthy'), `${live.id} as the health API shows it`);
  }

  // b starts again on its port: its next active check passes, which ends the ejection at once,
  // and traffic reaches it again.
  const probesBefore = b.probes;
  await b.restart();
  const restarted = Date.now();
  await eventually('b back in rotation on every proxy (gatehouse_target_healthy 1)', async () => inRotation(await view.figures(b)), 10_000);
  t.diagnostic(`b back in rotation ${Date.now() - restarted} ms after its restart`);
  assert.ok(b.probes > probesBefore, 'a probe of the restarted b');
  if (view.reportedStates) {
    await eventually('the health API to show b healthy again', async () => {
      const states = await view.reportedStates!(b);
      return states.length === proxies && states.every((state) => state === 'healthy');
    }, 10_000);
  }
  const back = await runLoad({ concurrency: 3, total: 90, maxMs: 15_000, send: (n) => view.clients[n % proxies]!.send(path('back', n)) });
  assert.deepEqual(back.filter((reply) => reply.status !== 200), []);
  const toB = back.filter((reply) => reply.target === 'b').length;
  assert.ok(toB >= 20, `b answered ${toB} of 90 once back`);
  assert.ok(b.arrivals.some((arrival) => arrival.run === 1), 'the restarted b got requests');
}

/** Active checks for {@link allTargetsDown}'s service: a target is unhealthy at its first failed probe. */
export const ALL_DOWN_POOL_SETTINGS = {
  healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 1, unhealthyThreshold: 1, expectStatus: '2xx' },
  outlierDetection: { maxFails: 2, windowSeconds: 10, ejectSeconds: 30 },
  retries: 1,
} as const;

/**
 * Every target of `pool` (round robin, {@link ALL_DOWN_POOL_SETTINGS}) SIGKILLed: each GET and
 * POST, one at a time (through the ejections, the last target in rotation never ejected) and then
 * concurrently (once active checks have found every target down), is answered 503
 * `{"error":"Service unavailable"}` in well under a second.
 */
export async function allTargetsDown(view: PoolGatewayView, pool: readonly TargetProcess[]): Promise<void> {
  const proxies = view.clients.length;
  const path = (kind: string, n: number): string => `${view.prefix}/${kind}/${n}`;
  const up = await runLoad({ concurrency: 3, total: 9, maxMs: 10_000, send: (n) => view.clients[n % proxies]!.send(path('up', n)) });
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
  const sequential = await runLoad({
    concurrency: 1,
    total: 30,
    maxMs: 20_000,
    send: (n) => {
      const http = view.clients[n % proxies]!;
      return n % 2 ? http.send(path('one', n), { method: 'POST', body: 'x' }) : http.send(path('one', n));
    },
  });
  assert.equal(sequential.length, 30);
  check(sequential, 'one at a time:');
  await eventually('every target out of rotation on every proxy', async () => {
    for (const target of pool) if (!outOfRotation(await view.figures(target))) return false;
    return true;
  }, 10_000);
  const concurrent = await runLoad({
    concurrency: 10,
    total: 100,
    maxMs: 20_000,
    send: (n) => view.clients[n % proxies]!.send(path('many', n), n % 3 ? {} : { method: 'POST', body: 'y' }),
  });
  assert.equal(concurrent.length, 100);
  check(concurrent, 'concurrently:');
}
