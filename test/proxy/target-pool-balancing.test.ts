/**
 * How a service's pool shares its requests (issue 23, "Done when"), on the data plane alone
 * against real target processes (test/support/target-process.ts):
 * - `round_robin` with weights 1, 2 and 5: over 10,000 requests each target gets its share
 *   within 5 %;
 * - `least_requests` with one target that sends its response head only after 10 s: under
 *   concurrent load it gets a small fraction of what each fast target gets.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Service } from '../../shared/types.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { eventually } from '../support/eventually.js';
import { countByTarget, PoolClient, runLoad } from '../support/pool-traffic.js';
import { service } from '../support/samples.js';
import { startTargetProcess, type TargetProcess } from '../support/target-process.js';

let plane: TestDataPlane;
const targets: TargetProcess[] = [];
const clients: PoolClient[] = [];
const published: Service[] = [];

before(async () => {
  plane = await startDataPlane();
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(targets.map((target) => target.close()));
  await plane?.close();
});

async function target(id: string, delayMs = 0): Promise<TargetProcess> {
  const started = await startTargetProcess(id, { delayMs });
  targets.push(started);
  return started;
}

function client(connections: number): PoolClient {
  const made = new PoolClient(plane.origin, connections);
  clients.push(made);
  return made;
}

async function publish(fields: Partial<Service> & Pick<Service, 'path' | 'targetUrl'>): Promise<Service> {
  const made = service(fields);
  published.push(made);
  await plane.publish(published);
  return made;
}

describe('round_robin with weights 1, 2 and 5', () => {
  it('gives each target its share of 10,000 requests within 5 %', async (t) => {
    const weighted = [
      { process: await target('w1'), weight: 1 },
      { process: await target('w2'), weight: 2 },
      { process: await target('w5'), weight: 5 },
    ];
    await publish({
      path: '/weighted',
      targetUrl: weighted[0]!.process.url,
      targets: weighted.map(({ process, weight }) => ({ url: process.url, weight })),
      loadBalancing: 'round_robin',
    });
    const http = client(16);
    const started = Date.now();
    const replies = await runLoad({ concurrency: 16, total: 10_000, maxMs: 40_000, send: (n) => http.send(`/weighted/${n}`) });
    t.diagnostic(`10,000 requests in ${Date.now() - started} ms`);
    assert.equal(replies.length, 10_000);
    assert.deepEqual(replies.filter((reply) => reply.status !== 200).slice(0, 3), [], 'failed requests');
    const counts = countByTarget(replies);
    t.diagnostic(`answered: ${JSON.stringify(Object.fromEntries(counts))}`);
    for (const { process, weight } of weighted) {
      const share = (10_000 * weight) / 8;
      const got = counts.get(process.id) ?? 0;
      assert.ok(Math.abs(got - share) <= share * 0.05, `${process.id} (weight ${weight}) answered ${got}, its share is ${share}`);
      // what the client was told is what the target saw
      assert.equal(process.arrivals.length, got);
    }
  });
});

describe('least_requests with a slow target (response head after 10 s)', () => {
  it('sends the slow target a small fraction of what each fast one gets', async (t) => {
    const fast1 = await target('fast1');
    const fast2 = await target('fast2');
    const slow = await target('slow', 10_000);
    await publish({
      path: '/least',
      targetUrl: fast1.url,
      targets: [fast1, slow, fast2].map((process) => ({ url: process.url, weight: 1 })),
      loadBalancing: 'least_requests',
    });
    const http = client(24);
    // The load ends well before the slow target answers anything: what is counted is what the
    // balancer chose, not how long the answers took. Requests still waiting on it are aborted.
    const stop = new AbortController();
    const load = runLoad({
      concurrency: 24,
      total: 3_000,
      maxMs: 8_000,
      send: (n) => http.send(`/least/${n}`, { signal: stop.signal, timeoutMs: 15_000 }),
    });
    const completed = () => fast1.arrivals.length + fast2.arrivals.length;
    await eventually('the fast targets to have answered 2,500', () => completed() >= 2_500, 8_000, 10);
    stop.abort();
    const replies = await load;
    const [toFast1, toFast2, toSlow] = [fast1.arrivals.length, fast2.arrivals.length, slow.arrivals.length];
    t.diagnostic(`fast1 ${toFast1}, fast2 ${toFast2}, slow ${toSlow}; ${replies.length} replies`);
    assert.deepEqual(replies.filter((reply) => reply.status !== 200 && reply.status !== 0), [], 'a request failed');
    assert.equal(replies.filter((reply) => reply.target === 'slow').length, 0, 'the slow target answered within the load');
    assert.ok(toSlow >= 1, 'the slow target was chosen at all');
    assert.ok(toSlow * 20 < Math.min(toFast1, toFast2), `slow ${toSlow} vs fast ${toFast1}, ${toFast2}: not markedly fewer`);
    // and the fast ones share the rest about evenly
    assert.ok(Math.abs(toFast1 - toFast2) < 0.2 * (toFast1 + toFast2), `fast1 ${toFast1}, fast2 ${toFast2}`);
  });
});
