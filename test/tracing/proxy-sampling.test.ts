/**
 * Sampling (OTEL_TRACES_SAMPLER, README "Tracing"), in the embedded gateway and in split mode:
 * - `traceidratio` at 0: nothing is exported at all (not even once the gateway stopped and its
 *   export sent what it held), yet every target gets a `traceparent` with flags 00, and a request's
 *   id is a fresh 16-hex id, not a trace id;
 * - `parentbased_traceidratio` (the default) at 0 follows a trusted caller's decision: a sampled
 *   caller's trace is continued and exported, an unsampled one's goes on unsampled to the target
 *   (its trace id, a span id of the gateway's, flags 00) with no span.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { newSpanId, newTraceId } from '../../shared/tracing/random-ids.js';
import { counterOf, startTracedGateway, TOPOLOGIES, type TracedGateway, type TracedListener } from '../support/traced-gateway.js';
import { headerValues, type Echo } from '../support/upstream.js';

const UNSAMPLED = /^00-([0-9a-f]{32})-([0-9a-f]{16})-00$/;

/** GET `target` on `listener` with `headers`: the request id the client got and the `traceparent` values the target got. */
async function send(listener: TracedListener, target: string, headers: Record<string, string> = {}): Promise<{ requestId: string; traceParents: string[] }> {
  const answer = await request(listener.origin + target, { headers });
  assert.equal(answer.statusCode, 200, target);
  const echo = (await answer.body.json()) as Echo;
  return { requestId: String(answer.headers['x-request-id']), traceParents: headerValues(echo, 'traceparent') };
}

for (const topology of TOPOLOGIES) {
  describe(`${topology}: traceidratio at 0`, () => {
    let g: TracedGateway;
    let cookie: string;

    before(async () => {
      g = await startTracedGateway(topology, { OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
      await g.createService({ name: 'Public', path: '/pub', targetUrl: g.upstream.origin, requireAuth: false });
      await g.createService({ name: 'App', path: '/app', targetUrl: g.upstream.origin, requireAuth: true });
      cookie = (await g.signIn()).cookie;
    });
    after(() => g?.close());

    it('exports nothing, even once stopped, while every target gets a traceparent with flags 00 and every request a 16-hex id', async () => {
      const caller = `00-${newTraceId()}-${newSpanId()}-01`;
      for (const listener of g.listeners) {
        for (const [target, headers] of [['/pub/a', {}], ['/app/b', { cookie }], ['/pub/c', { traceparent: caller }]] as const) {
          const { requestId, traceParents } = await send(listener, target, headers);
          assert.match(requestId, /^[0-9a-f]{16}$/, 'not traced: a fresh id, no trace id');
          assert.equal(traceParents.length, 1, target);
          assert.match(traceParents[0]!, UNSAMPLED, `${target}: the gateway's unsampled trace`);
          assert.notEqual(traceParents[0], caller, 'an untrusted caller\'s is never forwarded');
        }
        assert.equal(await counterOf(listener, 'gatehouse_trace_spans_exported_total'), 0);
        assert.equal(await counterOf(listener, 'gatehouse_trace_spans_dropped_total'), 0);
      }
      await g.close(); // the span export sends what it holds before the gateway stops
      assert.deepEqual(g.receiver.requests, [], 'no POST reached the collector');
    });
  });

  describe(`${topology}: parentbased_traceidratio at 0 with a trusted caller`, () => {
    let g: TracedGateway;

    before(async () => {
      g = await startTracedGateway(topology, { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', TRUST_PROXY: 'loopback' });
      await g.createService({ name: 'Public', path: '/pub', targetUrl: g.upstream.origin, requireAuth: false });
    });
    after(() => g?.close());

    it('follows the caller: an unsampled trace goes on unsampled with no span, a sampled one is continued and exported', async () => {
      const listener = g.listeners[0]!;
      const [unsampledTrace, unsampledSpan] = [newTraceId(), newSpanId()];
      const unsampled = await send(listener, '/pub/unsampled', { traceparent: `00-${unsampledTrace}-${unsampledSpan}-00` });
      assert.match(unsampled.requestId, /^[0-9a-f]{16}$/);
      const [passedOn] = unsampled.traceParents;
      const match = UNSAMPLED.exec(passedOn ?? '');
      assert.ok(match, `an unsampled traceparent: ${passedOn}`);
      assert.equal(match[1], unsampledTrace, 'the caller\'s trace');
      assert.notEqual(match[2], unsampledSpan, 'a span id of the gateway\'s own');

      const root = await send(listener, '/pub/root');
      assert.match(root.traceParents[0]!, UNSAMPLED, 'a root is decided by the ratio: 0');

      const [sampledTrace, sampledSpan] = [newTraceId(), newSpanId()];
      const sampled = await send(listener, '/pub/sampled', { traceparent: `00-${sampledTrace}-${sampledSpan}-01` });
      assert.equal(sampled.requestId, sampledTrace, 'a traced request is known by its trace id');
      const spans = await g.receiver.waitForTrace(sampledTrace, 'the continued server span', (all) => all.some((span) => span.kind === 'SERVER'));
      assert.equal(spans.find((span) => span.kind === 'SERVER')!.parentSpanId, sampledSpan);
      // Spans leave in the order they ended: the earlier requests' would have come first.
      assert.deepEqual(g.receiver.trace(unsampledTrace), []);
      assert.deepEqual(g.receiver.spans.filter((span) => span.attributes['url.path'] === '/pub/root'), []);
    });
  });
}
