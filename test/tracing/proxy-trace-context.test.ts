/**
 * Whose trace context the data plane continues (README "Tracing", W3C Trace Context), in the
 * embedded gateway and in split mode, every request sampled:
 * - an untrusted client's valid `traceparent` starts a new trace whose server span links to the
 *   client's span; neither its `traceparent` nor its `tracestate` reaches the target;
 * - a trusted one (the peer is TRUST_PROXY's, or TRACE_TRUST_INCOMING=true) is continued: the
 *   same trace id, the server span's parent its span id, its `tracestate` passed on;
 * - malformed ones (W3C Trace Context §3.2.2) are dropped: never linked, never forwarded, the
 *   target sees the gateway's own; a malformed `tracestate` of a trusted caller is dropped whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { newSpanId, newTraceId } from '../../shared/tracing/random-ids.js';
import type { ReceivedSpan } from '../support/otlp-trace-receiver.js';
import { startTracedGateway, TOPOLOGIES, type TracedGateway, type TracedListener } from '../support/traced-gateway.js';
import { headerValues, type Echo } from '../support/upstream.js';

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const CALLER = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;

/** A caller's context of its own (a continued trace is found by its id: each request needs another). */
function freshCaller(): { traceId: string; spanId: string; traceParent: string } {
  const [traceId, spanId] = [newTraceId(), newSpanId()];
  return { traceId, spanId, traceParent: `00-${traceId}-${spanId}-01` };
}
const CALLER_STATE = 'congo=t61rcWkgMzE, rojo=00f067aa0ba902b7';

/** Malformed `traceparent` values (§3.2.2), each carrying CALLER_TRACE where a trace id would be. */
const MALFORMED: Record<string, string> = {
  'uppercase hex': `00-${CALLER_TRACE.toUpperCase()}-${CALLER_SPAN}-01`,
  'a short trace id': `00-${CALLER_TRACE.slice(1)}-${CALLER_SPAN}-01`,
  'a long span id': `00-${CALLER_TRACE}-${CALLER_SPAN}0-01`,
  'version ff': `ff-${CALLER_TRACE}-${CALLER_SPAN}-01`,
  'an all-zero span id': `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`,
  'version 00 with more fields': `${CALLER}-extra`,
  'no dashes': CALLER.replaceAll('-', '_'),
};

/** What the target and the client saw of one request, and its spans once exported. */
interface Traced {
  requestId: string;
  /** The `traceparent` values the target received. */
  traceParents: string[];
  traceStates: string[];
  server: ReceivedSpan;
  client: ReceivedSpan;
}

/** GET `/pub/<tag>` on `listener` with `headers`: what the client and the target saw. */
async function send(listener: TracedListener, tag: string, headers: Record<string, string>): Promise<Omit<Traced, 'server' | 'client'>> {
  const answer = await request(`${listener.origin}/pub/${tag}`, { headers });
  assert.equal(answer.statusCode, 200);
  const echo = (await answer.body.json()) as Echo;
  return { requestId: String(answer.headers['x-request-id']), traceParents: headerValues(echo, 'traceparent'), traceStates: headerValues(echo, 'tracestate') };
}

/** `sent` with its server and client spans, once exported. */
async function withSpans(g: TracedGateway, sent: Omit<Traced, 'server' | 'client'>): Promise<Traced> {
  const spans = await g.receiver.waitForTrace(sent.requestId, 'server and client spans', (all) => all.some((span) => span.kind === 'SERVER') && all.some((span) => span.kind === 'CLIENT'));
  return { ...sent, server: spans.find((span) => span.kind === 'SERVER')!, client: spans.find((span) => span.kind === 'CLIENT')! };
}

/** {@link send}, then {@link withSpans}. */
async function traced(g: TracedGateway, listener: TracedListener, tag: string, headers: Record<string, string>): Promise<Traced> {
  return withSpans(g, await send(listener, tag, headers));
}

/** The request was traced in a trace of the gateway's own (not the caller's), and the target was told that one. */
function assertOwnTrace(seen: Traced): void {
  assert.notEqual(seen.requestId, CALLER_TRACE, 'a trace of its own');
  assert.equal(seen.server.traceId, seen.requestId);
  assert.equal(seen.server.parentSpanId, undefined, 'a root span');
  assert.deepEqual(seen.traceParents, [`00-${seen.requestId}-${seen.client.spanId}-01`], 'the target sees the gateway\'s traceparent alone');
}

for (const topology of TOPOLOGIES) {
  describe(`${topology}: incoming trace context`, () => {
    let g: TracedGateway;
    let trustedPeer: TracedListener;
    let trustingAll: TracedListener;

    before(async () => {
      g = await startTracedGateway(topology);
      await g.createService({ name: 'Public', path: '/pub', targetUrl: g.upstream.origin, requireAuth: false });
      trustedPeer = await g.addListener({ TRUST_PROXY: 'loopback' });
      trustingAll = await g.addListener({ TRACE_TRUST_INCOMING: 'true' });
    });
    after(() => g?.close());

    it('an untrusted client\'s traceparent starts a new trace that links to it; its traceparent and tracestate never reach the target', async () => {
      for (const listener of g.listeners.slice(0, topology === 'split' ? 2 : 1)) {
        const seen = await traced(g, listener, 'untrusted', { traceparent: CALLER, tracestate: CALLER_STATE });
        assertOwnTrace(seen);
        assert.deepEqual(seen.server.links.map((link) => [link.traceId, link.spanId]), [[CALLER_TRACE, CALLER_SPAN]], 'linked to the caller\'s span');
        assert.deepEqual(seen.traceStates, [], 'an untrusted tracestate is not passed on');
      }
    });

    it('a TRUST_PROXY peer\'s traceparent is continued: same trace, parent its span, its tracestate passed on', async () => {
      for (const listener of [trustedPeer, trustingAll]) {
        const caller = freshCaller();
        const seen = await traced(g, listener, 'trusted', { traceparent: caller.traceParent, tracestate: CALLER_STATE });
        assert.equal(seen.requestId, caller.traceId, 'the request id is the continued trace id');
        assert.deepEqual([seen.server.traceId, seen.server.parentSpanId, seen.server.links], [caller.traceId, caller.spanId, []]);
        assert.equal(seen.client.parentSpanId, seen.server.spanId);
        assert.deepEqual(seen.traceParents, [`00-${caller.traceId}-${seen.client.spanId}-01`]);
        assert.deepEqual(seen.traceStates, ['congo=t61rcWkgMzE,rojo=00f067aa0ba902b7'], 'the caller\'s tracestate, its optional spaces removed');
      }
    });

    it('malformed traceparent values are dropped: no link, never forwarded, the target sees the gateway\'s own', async () => {
      const cases = Object.entries(MALFORMED).flatMap(([form, value]) => [g.listeners[0]!, trustedPeer].map((listener) => ({ form, value, listener })));
      // All sent first, then their spans awaited: one export delay for all.
      const sent = [];
      for (const { form, value, listener } of cases) sent.push({ form, seen: await send(listener, 'malformed', { traceparent: value, tracestate: CALLER_STATE }) });
      for (const { form, seen: answered } of sent) {
        const seen = await withSpans(g, answered);
        assertOwnTrace(seen);
        assert.deepEqual(seen.server.links, [], `${form}: not linked`);
        assert.deepEqual(seen.traceStates, [], `${form}: its tracestate goes with it`);
      }
    });

    it('a trusted caller\'s malformed tracestate is dropped whole, its traceparent still continued', async () => {
      const caller = freshCaller();
      const seen = await traced(g, trustedPeer, 'bad-state', { traceparent: caller.traceParent, tracestate: 'congo=t61rcWkgMzE,Upper=1' });
      assert.equal(seen.server.parentSpanId, caller.spanId);
      assert.deepEqual(seen.traceStates, []);
    });
  });
}
