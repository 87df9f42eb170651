/**
 * Balancing and retries of a service's pool in the embedded gateway (design.md §4.13), the
 * services made through the admin API (`targets` with weights, `loadBalancing`, `retries`) and
 * proxied to real target processes (test/support/target-process.ts):
 * - `round_robin` with weights 1, 2 and 5: each within 5 % of its share of 10,000 requests;
 * - `least_requests` with a target whose response head comes after 10 s: it gets a small
 *   fraction of what each fast target gets;
 * - a target answering 503: a GET is retried on another target (the client gets its 200), a POST
 *   is not (the client gets the 503); with `retries: 0` the GET gets the 503 too, but a refused
 *   connection (a killed target) is still retried, for GET and POST alike.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiPools, startEmbeddedPoolGateway } from '../support/pool-gateways.js';
import { slowTargetUnderLeastRequests, weightedShares, type PoolGatewayView } from '../support/pool-scenarios.js';
import { runLoad, type Reply } from '../support/pool-traffic.js';

const pools = apiPools(() => startEmbeddedPoolGateway(), { connections: 24 });

describe('embedded: round_robin with weights 1, 2 and 5', () => {
  it('gives each target its share of 10,000 requests within 5 %', async (t) => {
    const weighted = [
      { target: await pools.target('w1'), weight: 1 },
      { target: await pools.target('w2'), weight: 2 },
      { target: await pools.target('w5'), weight: 5 },
    ];
    const view = await pools.service('/weighted', weighted.map(({ target }) => target), {
      targets: weighted.map(({ target, weight }) => ({ url: target.url, weight })),
      loadBalancing: 'round_robin',
    });
    await weightedShares(t, view, weighted);
  });
});

describe('embedded: least_requests with a slow target (response head after 10 s)', () => {
  it('sends the slow target a small fraction of what each fast one gets', async (t) => {
    const [fast1, slow, fast2] = [await pools.target('fast1'), await pools.target('slow', { delayMs: 10_000 }), await pools.target('fast2')];
    const view = await pools.service('/least', [fast1, slow, fast2], { loadBalancing: 'least_requests' });
    await slowTargetUnderLeastRequests(t, view, [fast1, fast2], slow);
  });
});

describe('embedded: retries', () => {
  /** Outlier detection that keeps every target in rotation here. */
  const LENIENT = { maxFails: 100, windowSeconds: 1, ejectSeconds: 1 };

  /** `count` requests one at a time (round robin over three: every third goes first to the first target). */
  const sequence = (view: PoolGatewayView, count: number, send: (n: number) => [string, { method?: 'POST'; body?: string }?]): Promise<Reply[]> =>
    runLoad({ concurrency: 1, total: count, maxMs: 15_000, send: (n) => view.clients[0]!.send(...send(n)) });

  it('a 503 on a GET is retried on another target, on a POST it is not; retries: 0 passes the GET\'s 503 on but still retries a refused connection', async () => {
    const failing = await pools.target('failing', { status: 503 });
    const [ok1, ok2, dead] = [await pools.target('ok1'), await pools.target('ok2'), await pools.target('dead')];
    const retrying = await pools.service('/retry', [failing, ok1, ok2], { outlierDetection: LENIENT, retries: 1 });
    const noRetry = await pools.service('/no-retry', [failing, ok1, ok2], { outlierDetection: LENIENT, retries: 0 });
    const refused = await pools.service('/refused', [dead, ok1, ok2], { outlierDetection: LENIENT, retries: 0 });
    await dead.kill();

    const gets = await sequence(retrying, 30, (n) => [`/retry/get/${n}`]);
    assert.ok(gets.filter((reply) => failing.arrivedIds().has(reply.id)).length >= 5, 'GETs reached the failing target');
    for (const reply of gets) assert.ok(reply.status === 200 && reply.target !== 'failing', `GET ${reply.id}: ${reply.status} from ${reply.target}`);

    const posts = await sequence(retrying, 30, (n) => [`/retry/post/${n}`, { method: 'POST', body: `body ${n}` }]);
    const postsToFailing = posts.filter((reply) => failing.arrivedIds().has(reply.id));
    assert.ok(postsToFailing.length >= 5, 'POSTs reached the failing target');
    for (const reply of posts) {
      if (postsToFailing.includes(reply)) assert.ok(reply.status === 503 && reply.target === 'failing', `POST ${reply.id} (to the failing target): ${reply.status} from ${reply.target}`);
      else assert.equal(reply.status, 200, `POST ${reply.id}`);
    }
    assert.ok(postsToFailing.every((reply) => !ok1.arrivedIds().has(reply.id) && !ok2.arrivedIds().has(reply.id)), 'a POST answered 503 was sent again');

    const unretried = await sequence(noRetry, 30, (n) => [`/no-retry/get/${n}`]);
    const getsToFailing = unretried.filter((reply) => failing.arrivedIds().has(reply.id));
    assert.ok(getsToFailing.length >= 5);
    for (const reply of unretried) assert.equal(reply.status, getsToFailing.includes(reply) ? 503 : 200, `GET ${reply.id} (retries: 0)`);

    const afterRefusal = await sequence(refused, 30, (n) => (n % 2 ? [`/refused/post/${n}`, { method: 'POST', body: `body ${n}` }] : [`/refused/get/${n}`]));
    for (const reply of afterRefusal) assert.ok(reply.status === 200 && (reply.target === 'ok1' || reply.target === 'ok2'), `${reply.method} ${reply.id} (retries: 0, a dead target): ${reply.status} ${reply.text}`);
    const [deadFigures] = await refused.figures(dead);
    assert.ok(deadFigures!.errors! >= 5, `the dead target was tried (${JSON.stringify(deadFigures)})`);
  });
});
