/**
 * The data plane's spans (README "Tracing", design.md §3.10), in the embedded gateway and in split
 * mode through each of its two proxy processes, exported over OTLP/HTTP to a real receiver
 * (test/support/otlp-trace-receiver.ts) with every request sampled:
 * - one protected request yields a server span `GET /app` with the HTTP semantic conventions'
 *   attributes (the query's keys only), its `session lookup` child (the store read: a second
 *   request, a cache hit, has none), in split mode its `rate limit` child (the limit is in Redis
 *   there), and a CLIENT span for the upstream attempt; the target
 *   receives a `traceparent` of that trace naming the client span, and the request's id is the
 *   trace id, both to the target and to the client;
 * - a request to a pool whose first target is dead has two client spans: the refused one (its
 *   error.type) and the retry on the live
 *   target (gatehouse.retry.reason), named in the target's `traceparent`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { freePort } from '../support/free-port.js';
import type { ReceivedSpan } from '../support/otlp-trace-receiver.js';
import type { SignedIn } from '../support/sessions.js';
import { startTracedGateway, TOPOLOGIES, type TracedGateway } from '../support/traced-gateway.js';
import { headerValues, type Echo } from '../support/upstream.js';

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** The one span of `spans` that `holds`; fails naming `what` unless there is exactly one. */
function only(spans: ReceivedSpan[], what: string, holds: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(holds);
  assert.equal(found.length, 1, `one ${what} span among ${spans.map((span) => `${span.kind} ${span.name}`).join(', ')}`);
  return found[0]!;
}

/** Each of `expected`'s attributes on `span`, as it is. */
function assertAttributes(span: ReceivedSpan, expected: Record<string, unknown>): void {
  const actual = Object.fromEntries(Object.keys(expected).map((key) => [key, span.attributes[key]]));
  assert.deepEqual(actual, expected, `attributes of ${span.kind} ${span.name}`);
}

/** The echo the target answered with, and the one `traceparent` it received (its trace and span ids). */
function receivedContext(echo: Echo): { traceId: string; spanId: string; requestId: string } {
  const [traceParent, ...more] = headerValues(echo, 'traceparent');
  assert.equal(more.length, 0, 'one traceparent');
  const match = TRACE_PARENT.exec(traceParent ?? '');
  assert.ok(match, `a sampled version-00 traceparent: ${traceParent}`);
  const [requestId, ...others] = headerValues(echo, 'x-request-id');
  assert.equal(others.length, 0, 'one X-Request-Id');
  return { traceId: match[1]!, spanId: match[2]!, requestId: requestId! };
}

for (const topology of TOPOLOGIES) {
  describe(`${topology}: the spans of a proxied request`, () => {
    let g: TracedGateway;
    let user: SignedIn;
    let appId: string;
    let deadPort: number;
    /** The retried request's refused attempt (its client span). */
    let refusedAttempt: ReceivedSpan | undefined;

    before(async () => {
      // Split mode's rate limit lives in Redis: its span is the Redis call's.
      g = await startTracedGateway(topology, topology === 'split' ? { RATE_LIMIT_GENERAL: '100000/15m' } : {});
      appId = await g.createService({ name: 'App', path: '/app', targetUrl: `${g.upstream.origin}/backend`, requireAuth: true });
      deadPort = await freePort();
      const dead = `http://127.0.0.1:${deadPort}`;
      await g.createService({
        name: 'Retried',
        path: '/retried',
        targetUrl: dead,
        targets: [
          { url: dead, weight: 1 },
          { url: g.upstream.origin, weight: 1 },
        ],
        loadBalancing: 'round_robin',
        outlierDetection: { maxFails: 100, windowSeconds: 1, ejectSeconds: 1 },
        requireAuth: false,
      });
      user = await g.signIn({ sub: 'user-sub', name: 'Una User', email: 'user@example.com', isAdmin: false });
    });
    after(() => g?.close());

    it('one protected request: a server span GET /app with its semantic attributes, session lookup, (split) rate limit and a client span the target received as its traceparent', async () => {
      for (const listener of g.listeners) {
        const answer = await request(`${listener.origin}/app/items/42?color=red&size=9`, { headers: { cookie: user.cookie, 'user-agent': 'trace-test/1.0' } });
        assert.equal(answer.statusCode, 200);
        const echo = (await answer.body.json()) as Echo;
        const requestId = String(answer.headers['x-request-id']);
        assert.match(requestId, /^[0-9a-f]{32}$/, 'a sampled request is known by its trace id');
        const received = receivedContext(echo);
        assert.equal(received.traceId, requestId, 'the target is told the same trace');
        assert.equal(received.requestId, requestId, 'and the same request id');

        const expected = topology === 'split' ? ['rate limit', 'session lookup', 'GET', 'GET /app'] : ['session lookup', 'GET', 'GET /app'];
        const spans = await g.receiver.waitForTrace(requestId, expected.join(', '), (all) => expected.every((name) => all.some((span) => span.name === name)));
        assert.deepEqual(spans.map((span) => span.name).sort(), [...expected].sort(), 'no other span of this request');

        const server = only(spans, 'server', (span) => span.kind === 'SERVER');
        assert.equal(server.name, 'GET /app', 'named by its route, never its raw path');
        assert.equal(server.parentSpanId, undefined, 'a new trace: the client sent no traceparent');
        assertAttributes(server, {
          'http.request.method': 'GET',
          'url.path': '/app/items/42',
          'url.query': 'color=&size=',
          'url.scheme': 'http',
          'http.route': '/app',
          'http.response.status_code': 200,
          'server.address': '127.0.0.1',
          'client.address': '127.0.0.1',
          'user_agent.original': 'trace-test/1.0',
          'gatehouse.service.id': appId,
          'gatehouse.request_id': requestId,
          'error.type': undefined,
        });
        assert.equal(server.resource['service.name'], topology === 'split' ? 'gatehouse-proxy' : 'gatehouse');

        const lookup = only(spans, 'session lookup', (span) => span.name === 'session lookup');
        assert.deepEqual([lookup.kind, lookup.parentSpanId], ['INTERNAL', server.spanId]);
        if (topology === 'split') {
          const limit = only(spans, 'rate limit', (span) => span.name === 'rate limit');
          assert.deepEqual([limit.kind, limit.parentSpanId], ['INTERNAL', server.spanId]);
        }

        const client = only(spans, 'client', (span) => span.kind === 'CLIENT');
        assert.equal(client.name, 'GET');
        assert.equal(client.parentSpanId, server.spanId);
        assertAttributes(client, {
          'http.request.method': 'GET',
          'server.address': '127.0.0.1',
          'server.port': g.upstream.port,
          'url.full': `${g.upstream.origin}/backend/items/42`,
          'http.response.status_code': 200,
          'gatehouse.retry.reason': undefined,
        });
        assert.equal(received.spanId, client.spanId, "the target's traceparent names the client span");

        // The session is in this process's cache now: the next request reads no store, and has no lookup span.
        const again = await request(`${listener.origin}/app/items/43`, { headers: { cookie: user.cookie } });
        assert.equal(again.statusCode, 200);
        await again.body.dump();
        const againId = String(again.headers['x-request-id']);
        const cached = expected.filter((name) => name !== 'session lookup');
        const againSpans = await g.receiver.waitForTrace(againId, cached.join(', '), (all) => cached.every((name) => all.some((span) => span.name === name)));
        assert.deepEqual(againSpans.map((span) => span.name).sort(), [...cached].sort(), 'a cache hit makes no session lookup span');
      }
    });

    it('a request to a pool whose first target is dead: two client spans, the refused attempt and the retry with its reason, the second named in the target\'s traceparent', async () => {
      // Round robin over [dead, live]: of two requests in a row, one goes to the dead target first.
      const answers: Array<{ requestId: string; echo: Echo }> = [];
      for (let i = 0; i < 2; i++) {
        const answer = await request(`${g.listeners[0]!.origin}/retried/r${i}?token=abc`);
        assert.equal(answer.statusCode, 200, 'a refused connection is retried on the live target');
        answers.push({ requestId: String(answer.headers['x-request-id']), echo: (await answer.body.json()) as Echo });
      }
      const traces = await g.receiver.waitFor('both requests whole', (receiver) => {
        const all = answers.map(({ requestId }) => receiver.trace(requestId));
        return all.every((spans) => spans.some((span) => span.kind === 'SERVER')) ? all : undefined;
      });
      const retriedAt = traces.findIndex((spans) => spans.filter((span) => span.kind === 'CLIENT').length === 2);
      assert.notEqual(retriedAt, -1, 'one of the two requests was retried');
      const spans = traces[retriedAt]!;
      const server = only(spans, 'server', (span) => span.kind === 'SERVER');
      assert.equal(server.name, 'GET /retried');
      const [refused, retry] = spans.filter((span) => span.kind === 'CLIENT').sort((a, b) => Number(a.attributes['server.port'] === g.upstream.port) - Number(b.attributes['server.port'] === g.upstream.port));
      for (const attempt of [refused!, retry!]) assert.deepEqual([attempt.name, attempt.parentSpanId], ['GET', server.spanId]);
      assertAttributes(refused!, {
        'server.port': deadPort,
        'url.full': `http://127.0.0.1:${deadPort}/r${retriedAt}`,
        'http.response.status_code': undefined,
        'gatehouse.retry.reason': undefined,
      });
      assertAttributes(retry!, {
        'server.port': g.upstream.port,
        'url.full': `${g.upstream.origin}/r${retriedAt}`,
        'http.response.status_code': 200,
        'gatehouse.retry.reason': 'not-sent',
      });
      refusedAttempt = refused;
      const received = receivedContext(answers[retriedAt]!.echo);
      assert.deepEqual([received.traceId, received.spanId], [server.traceId, retry!.spanId], "the target's traceparent names the retry's span");
    });

    it("the refused attempt's client span says why (error.type)", () => {
      assert.ok(refusedAttempt, 'the retried request above');
      assert.equal(refusedAttempt.attributes['error.type'], 'ECONNREFUSED');
    });
  });
}
