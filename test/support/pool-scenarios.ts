/**
 * The failure scenarios of a service's pool (design.md §4.13) as steps and assertions any
 * gateway can be put through, whether a data plane alone, the embedded gateway or the split
 * processes: what differs is only how the test reaches the gateway ({@link PoolGatewayView}).
 * The targets are real processes (target-process.ts).
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { CookieJar } from './cookie-jar.js';
import { eventually } from './eventually.js';
import { countByTarget, runLoad, type PoolClient, type Reply, type TargetFigures } from './pool-traffic.js';
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

/** The balancing and active check the kill scenario's service must have (and its outlier detection). */
export const FAILOVER_POOL_SETTINGS = {
  loadBalancing: 'round_robin',
  // Checks every second, but 10 failing ones before `unhealthy`: what takes the dead target out
  // is outlier detection, and what brings it back is a passing check (the ejection itself lasts a
  // minute).
  healthCheck: { path: '/healthz', intervalSeconds: 1, timeoutMs: 500, healthyThreshold: 1, unhealthyThreshold: 10, expectStatus: 200 },
  outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
  retries: 1,
} as const;

/**
 * Three targets `pool` (weight 1 each, {@link FAILOVER_POOL_SETTINGS}: `round_robin`) under
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

/** Balancing and active checks for {@link allTargetsDown}'s service: round robin, a target unhealthy at its first failed probe. */
export const ALL_DOWN_POOL_SETTINGS = {
  loadBalancing: 'round_robin',
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

/** Runs `work` for each of `items`, `concurrency` at a time. */
async function eachLimited<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

/** How many of `assigned` each target has. */
function tally(assigned: Iterable<string>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const target of assigned) counts[target] = (counts[target] ?? 0) + 1;
  return counts;
}

/**
 * `client_ip` over three targets `pool` (weight 1 each) behind a gateway with TRUST_PROXY
 * `loopback`: 240 clients told apart by `X-Forwarded-For`, each sending its requests to the
 * proxies in turn. Each keeps one target (on every proxy: the hash is of the address and the
 * target's url); they spread over the three; the second target SIGKILLed, exactly its clients
 * move, each to one target it then keeps, spread over both survivors.
 */
export async function clientIpAffinity(t: TestContext, view: PoolGatewayView, pool: readonly TargetProcess[]): Promise<void> {
  const [, b] = pool as [TargetProcess, TargetProcess, TargetProcess];
  const ids = pool.map((target) => target.id);
  const proxies = view.clients.length;
  const clients = Array.from({ length: 240 }, (_, i) => `10.${20 + (i % 7)}.${i >> 4}.${((i * 37) % 251) + 1}`);

  /** Four requests from `address`, to each proxy in turn: the target that answered them all. */
  const fromClient = async (address: string, index: number, tag: string): Promise<string> => {
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const reply = await view.clients[(index + i) % proxies]!.send(`${view.prefix}/${tag}/${i}`, { headers: { 'x-forwarded-for': address } });
      assert.equal(reply.status, 200, `${address}: ${reply.status} ${reply.error ?? reply.text}`);
      seen.push(reply.target!);
    }
    assert.equal(new Set(seen).size, 1, `${address} (${tag}) moved between targets: ${seen}`);
    return seen[0]!;
  };

  const before: string[] = [];
  await eachLimited(clients, 12, async (address, index) => void (before[index] = await fromClient(address, index, 'before')));
  t.diagnostic(`clients per target: ${JSON.stringify(tally(before))}`);
  for (const id of ids) assert.ok(before.filter((target) => target === id).length >= 40, `${id} has too few of 240 clients: ${JSON.stringify(tally(before))}`);

  await b.kill();
  const afterKill: string[] = [];
  await eachLimited(clients, 12, async (address, index) => void (afterKill[index] = await fromClient(address, index, 'after')));
  t.diagnostic(`after ${b.id} was killed: ${JSON.stringify(tally(afterKill))}`);
  const moved = clients.filter((_, i) => before[i] !== afterKill[i]);
  const ofDead = clients.filter((_, i) => before[i] === b.id);
  assert.deepEqual(moved, ofDead, `the clients that moved are exactly ${b.id}'s`);
  const landed = tally(afterKill.filter((_, i) => before[i] === b.id));
  for (const id of ids.filter((id) => id !== b.id)) assert.ok((landed[id] ?? 0) >= 10, `${b.id}'s clients went to ${JSON.stringify(landed)}`);
}

/** A client with a cookie jar (a browser's, as far as cookies go). */
interface JarClient {
  jar: CookieJar;
  /** The targets that answered it, in order. */
  seen: string[];
  /** The `gw_target` Set-Cookie values it was given, in order. */
  given: string[];
}

const STICKY_COOKIE = /^gw_target=([^;]*)(;.*)?$/;

/**
 * `cookie` over three targets `pool` (weight 1 each, so `round_robin` over new clients), served at
 * `view.prefix` with PUBLIC_URL on http (so the cookie is `gw_target`): 60 browsers, each sending
 * a cookie of its own (`theme=dark`) with whatever its jar holds, to the proxies in turn.
 * - Each is given `gw_target` once, on its first answer: a 22-character opaque id (no address,
 *   port or encoded url of a target), one value per target, `Path` the prefix, HttpOnly,
 *   SameSite=Lax, host-only, no expiry; a browser sends it under the prefix only.
 * - Each keeps its target on every proxy (the cookie's key is shared); a target never sees
 *   `gw_target`, only the client's own cookie.
 * - A made-up value is replaced by a real one.
 * - The second target SIGKILLed: exactly its clients move, each given one new cookie naming the
 *   target it then keeps; nobody else is given a cookie.
 */
export async function cookieAffinity(t: TestContext, view: PoolGatewayView, pool: readonly TargetProcess[]): Promise<void> {
  const b = pool[1]!;
  const proxies = view.clients.length;
  const origin = view.clients[0]!.origin;

  const visit = async (client: JarClient, index: number, path: string): Promise<void> => {
    const http = view.clients[(index + client.seen.length) % proxies]!;
    const url = `${http.origin}${view.prefix}/${path}`;
    const cookie = ['theme=dark', client.jar.header(url)].filter(Boolean).join('; ');
    const reply = await http.send(`${view.prefix}/${path}`, { headers: { cookie } });
    assert.equal(reply.status, 200, `${reply.status} ${reply.error ?? reply.text}`);
    assert.equal(reply.answer!.cookie, 'theme=dark', `the target got Cookie: ${reply.answer!.cookie}`);
    const setCookie = [reply.headers['set-cookie'] ?? []].flat().filter((value) => value.startsWith('gw_target='));
    client.given.push(...setCookie);
    client.jar.store(setCookie, url);
    client.seen.push(reply.target!);
  };

  const clients: JarClient[] = Array.from({ length: 60 }, () => ({ jar: new CookieJar(), seen: [], given: [] }));
  await eachLimited(clients, 12, async (client, index) => {
    for (let i = 0; i < 4; i++) await visit(client, index, `before/${i}`);
  });
  const values = new Map<string, string>(); // cookie value → target
  for (const client of clients) {
    assert.equal(new Set(client.seen).size, 1, `a client moved between targets: ${client.seen}`);
    assert.equal(client.given.length, 1, `Set-Cookie ${client.given.length} times: ${client.given}`);
    const header = client.given[0]!;
    const [, value, attributes = ''] = STICKY_COOKIE.exec(header)!;
    assert.match(value!, /^[A-Za-z0-9_-]{22}$/, `an opaque id: ${header}`);
    for (const target of pool) {
      const encoded = [Buffer.from(target.url).toString('base64url'), Buffer.from(target.url).toString('base64'), Buffer.from(String(target.port)).toString('base64url')];
      assert.ok(!header.includes(String(target.port)) && !header.includes('127.0.0.1') && !encoded.some((text) => value!.includes(text.slice(0, 8))), `names an address: ${header}`);
    }
    const parts = attributes.split(';').map((part) => part.trim().toLowerCase()).filter(Boolean);
    assert.ok(parts.includes(`path=${view.prefix}`), `scoped to the prefix: ${header}`);
    assert.ok(parts.includes('httponly'), `HttpOnly: ${header}`);
    assert.ok(parts.includes('samesite=lax'), `SameSite=Lax: ${header}`);
    assert.ok(!parts.some((part) => part.startsWith('domain=') || part.startsWith('max-age=') || part.startsWith('expires=')), `a host-only session cookie: ${header}`);
    assert.equal(values.get(value!) ?? client.seen[0], client.seen[0], 'one cookie value names one target');
    values.set(value!, client.seen[0]!);
    assert.equal(client.jar.get('gw_target', `${origin}${view.prefix}/x`), value);
    assert.equal(client.jar.get('gw_target', `${origin}/other/x`), undefined, 'sent outside the prefix');
    assert.equal(client.jar.get('gw_target', `${origin}${view.prefix}foo`), undefined, 'sent outside the prefix');
  }
  assert.equal(values.size, 3, 'one cookie value per target');
  const before = clients.map((client) => client.seen[0]!);
  t.diagnostic(`clients per target: ${JSON.stringify(tally(before))}`);
  for (const target of pool) assert.ok(before.filter((id) => id === target.id).length >= 10, `new clients are balanced: ${JSON.stringify(tally(before))}`);

  const forger: JarClient = { jar: new CookieJar(), seen: [], given: [] };
  forger.jar.store(`gw_target=AAAAAAAAAAAAAAAAAAAAAA; Path=${view.prefix}`, `${origin}${view.prefix}/`);
  await visit(forger, 0, 'forged');
  assert.equal(forger.given.length, 1, 'a forged cookie is replaced');
  assert.ok(values.has(STICKY_COOKIE.exec(forger.given[0]!)![1]!), 'by one naming a target');

  await b.kill();
  for (const client of clients) client.given.length = 0;
  await eachLimited(clients, 12, async (client, index) => {
    for (let i = 0; i < 4; i++) await visit(client, index, `after/${i}`);
  });
  clients.forEach((client, i) => {
    const after = client.seen.slice(4);
    assert.equal(new Set(after).size, 1, `a client moved between targets after the kill: ${after}`);
    if (before[i] === b.id) {
      assert.notEqual(after[0], b.id);
      assert.equal(client.given.length, 1, `the dead target's client is given a new cookie once: ${client.given}`);
      assert.equal(values.get(STICKY_COOKIE.exec(client.given[0]!)![1]!), after[0], 'the new cookie names its new target');
    } else {
      assert.equal(after[0], before[i], 'a live target\'s client moved');
      assert.deepEqual(client.given, [], 'a live target\'s client was given a cookie');
    }
  });
}

/**
 * `round_robin` over `weighted` (targets and their weights, e.g. 1, 2, 5): 10,000 requests, 16 at
 * a time over keep-alive connections (the proxies in turn), all answered 200, and each target's
 * count within 5 % of its share.
 */
export async function weightedShares(t: TestContext, view: PoolGatewayView, weighted: ReadonlyArray<{ target: TargetProcess; weight: number }>): Promise<void> {
  const proxies = view.clients.length;
  const started = Date.now();
  const replies = await runLoad({ concurrency: 16, total: 10_000, maxMs: 45_000, send: (n) => view.clients[n % proxies]!.send(`${view.prefix}/${n}`) });
  t.diagnostic(`10,000 requests in ${Date.now() - started} ms`);
  assert.equal(replies.length, 10_000);
  assert.deepEqual(replies.filter((reply) => reply.status !== 200).slice(0, 3), [], 'failed requests');
  const counts = countByTarget(replies);
  t.diagnostic(`answered: ${JSON.stringify(Object.fromEntries(counts))}`);
  const total = weighted.reduce((sum, { weight }) => sum + weight, 0);
  for (const { target, weight } of weighted) {
    const share = (10_000 * weight) / total;
    const got = counts.get(target.id) ?? 0;
    assert.ok(Math.abs(got - share) <= share * 0.05, `${target.id} (weight ${weight}) answered ${got}, its share is ${share}`);
  }
}

/**
 * `least_requests` over two fast targets and `slow`, which sends its response head only after
 * 10 s: 24 clients at a time send up to 3,000 requests until the fast ones have answered 2,500
 * (well before the slow one answers anything: what is counted is what the balancer chose), then
 * the requests still waiting on it are aborted. The slow target gets a twentieth of what either
 * fast one gets at most; the fast ones share the rest about evenly.
 */
export async function slowTargetUnderLeastRequests(t: TestContext, view: PoolGatewayView, fast: readonly [TargetProcess, TargetProcess], slow: TargetProcess): Promise<void> {
  const proxies = view.clients.length;
  const [fast1, fast2] = fast;
  const stop = new AbortController();
  const load = runLoad({
    concurrency: 24,
    total: 3_000,
    maxMs: 8_000,
    send: (n) => view.clients[n % proxies]!.send(`${view.prefix}/${n}`, { signal: stop.signal, timeoutMs: 15_000 }),
  });
  const fastBefore = fast1.arrivals.length + fast2.arrivals.length;
  await eventually('the fast targets to have answered 2,500', () => fast1.arrivals.length + fast2.arrivals.length - fastBefore >= 2_500, 8_000, 10);
  stop.abort();
  const replies = await load;
  // (not counting the request createPoolService made to see the service routed: `/ready`)
  const loadArrivals = (target: TargetProcess): number => target.arrivals.filter((arrival) => arrival.path !== '/ready').length;
  const [toFast1, toFast2, toSlow] = [loadArrivals(fast1), loadArrivals(fast2), loadArrivals(slow)];
  t.diagnostic(`${fast1.id} ${toFast1}, ${fast2.id} ${toFast2}, ${slow.id} ${toSlow}; ${replies.length} replies`);
  assert.deepEqual(replies.filter((reply) => reply.status !== 200 && reply.status !== 0), [], 'a request failed');
  assert.equal(replies.filter((reply) => reply.target === slow.id).length, 0, 'the slow target answered within the load');
  assert.ok(toSlow >= 1, 'the slow target was chosen at all');
  assert.ok(toSlow * 20 < Math.min(toFast1, toFast2), `${slow.id} ${toSlow} vs ${toFast1}, ${toFast2}: not markedly fewer`);
  assert.ok(Math.abs(toFast1 - toFast2) < 0.2 * (toFast1 + toFast2), `${fast1.id} ${toFast1}, ${fast2.id} ${toFast2}`);
}
