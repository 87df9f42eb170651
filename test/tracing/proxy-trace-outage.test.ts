/**
 * The trace collector down (README "Tracing", "Queue and drops"), in the embedded gateway and in
 * split mode, every request sampled: while the receiver answers 503 to every POST, requests are
 * answered as ever, the spans the exporter gave up on are counted in
 * `gatehouse_trace_spans_dropped_total`, and the outage is one warning however many batches fail;
 * once the collector answers again, new spans arrive and `gatehouse_trace_spans_exported_total`
 * counts them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { counterOf, startTracedGateway, TOPOLOGIES, type TracedGateway, type TracedListener } from '../support/traced-gateway.js';

const UNREACHABLE = /trace collector unreachable/;
/** The exporter retries a 503 five times with backoff within its 10 s timeout before it gives a batch up. */
const GIVE_UP_MS = 60_000;

/** `count` GETs of `/pub/<tag>-<n>` on `listener`, one after another; their statuses. */
async function requests(listener: TracedListener, tag: string, count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const answer = await request(`${listener.origin}/pub/${tag}-${i}`);
    await answer.body.dump();
    statuses.push(answer.statusCode);
  }
  return statuses;
}

/** The warnings of `listener`'s process that say the collector is unreachable. */
function outageWarnings(listener: TracedListener): string[] {
  return listener
    .logs()
    .split('\n')
    .filter((line) => UNREACHABLE.test(line));
}

for (const topology of TOPOLOGIES) {
  describe(`${topology}: the trace collector down`, () => {
    let g: TracedGateway;

    before(async () => {
      g = await startTracedGateway(topology);
      await g.createService({ name: 'Public', path: '/pub', targetUrl: g.upstream.origin, requireAuth: false });
    });
    after(() => g?.close());

    it('requests are unaffected, dropped spans are counted, the outage is one warning; spans flow again once it answers', async () => {
      const listener = g.listeners[0]!;
      g.receiver.refusing = true;
      const postsBefore = g.receiver.requests.length;
      assert.deepEqual(new Set(await requests(listener, 'first', 10)), new Set([200]));
      const dropped = () => counterOf(listener, 'gatehouse_trace_spans_dropped_total');
      await eventually('the first batch dropped', async () => (await dropped()) >= 20, GIVE_UP_MS); // a server and a client span each
      const afterFirst = await dropped();
      // What the setup's requests exported before the outage, if anything; nothing more from here on.
      const exportedBefore = await counterOf(listener, 'gatehouse_trace_spans_exported_total');
      assert.deepEqual(new Set(await requests(listener, 'second', 10)), new Set([200]), 'answered while the exporter gives up');
      await eventually('the second batch dropped', async () => (await dropped()) >= afterFirst + 20, GIVE_UP_MS);
      assert.ok(g.receiver.requests.slice(postsBefore).every((post) => post.status === 503), 'every POST was refused meanwhile');
      assert.equal(outageWarnings(listener).length, 1, `one warning for the outage:\n${listener.logs()}`);
      assert.equal(await counterOf(listener, 'gatehouse_trace_spans_exported_total'), exportedBefore);

      g.receiver.refusing = false;
      const answer = await request(`${listener.origin}/pub/back`);
      await answer.body.dump();
      const requestId = String(answer.headers['x-request-id']);
      await g.receiver.waitForTrace(requestId, 'exported again', (spans) => spans.some((span) => span.kind === 'SERVER'));
      await eventually('exported spans counted', async () => (await counterOf(listener, 'gatehouse_trace_spans_exported_total')) >= exportedBefore + 2);
      assert.equal(outageWarnings(listener).length, 1, 'the return is no warning');
    });
  });
}
