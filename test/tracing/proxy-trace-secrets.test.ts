/**
 * No secret in a span (README "Tracing", "What is never recorded"), in the embedded gateway and in
 * split mode, every request sampled: after proxied requests carrying a session cookie, an app's own
 * cookie, a CSRF token, a bearer token and query values, and an API call through the public origin
 * (handed off to the admin process in split mode), every attribute the gateway's processes exported,
 * up to their stop (which sends what they hold), is scanned for each of those values and for the
 * identity assertion the target got: none is there. With TRACE_QUERY off `url.query` holds the
 * query's keys alone; TRACE_QUERY=true records it whole.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { ReceivedSpan } from '../support/otlp-trace-receiver.js';
import { startTracedGateway, TOPOLOGIES, type TracedGateway } from '../support/traced-gateway.js';
import { headerValues, type Echo } from '../support/upstream.js';

const QUERY_VALUES = ['q-code-4f1c9a', 'q-state-77d2e0'];
const QUERY = `code=${QUERY_VALUES[0]}&state=${QUERY_VALUES[1]}`;
const APP_COOKIE = 'app-cookie-93be1f';
const BEARER = 'bearer-token-5a0c2d';

/** Every text a span carries: its name, attributes, links' attributes, resource and tracestate. */
function textsOf(span: ReceivedSpan): string[] {
  const values = [span.attributes, span.resource, ...span.links.map((link) => link.attributes)].flatMap((map) => Object.entries(map).flatMap(([key, value]) => [key, JSON.stringify(value)]));
  return [span.name, span.traceState ?? '', ...values];
}

for (const topology of TOPOLOGIES) {
  describe(`${topology}: what spans never hold`, () => {
    let g: TracedGateway;

    before(async () => {
      g = await startTracedGateway(topology);
      await g.createService({ name: 'App', path: '/app', targetUrl: g.upstream.origin, requireAuth: true });
    });
    after(() => g?.close());

    it('no exported attribute holds the cookie, session id, CSRF token, bearer token, assertion or query values the requests carried', async () => {
      const user = await g.signIn({ sub: 'user-sub', isAdmin: true });
      const sessionId = user.cookie.slice(user.cookie.indexOf('=') + 1);
      const assertions: string[] = [];
      const requestIds: string[] = [];
      for (const listener of g.listeners) {
        const answer = await request(`${listener.origin}/app/orders?${QUERY}`, {
          headers: { cookie: `${user.cookie}; app_session=${APP_COOKIE}`, 'x-csrf-token': user.csrfToken, authorization: `Bearer ${BEARER}` },
        });
        assert.equal(answer.statusCode, 200);
        const echo = (await answer.body.json()) as Echo;
        assertions.push(...headerValues(echo, 'x-gatehouse-assertion'));
        requestIds.push(String(answer.headers['x-request-id']));
        // The API through the public origin: the admin plane in-process, or the hand-off to the admin process.
        const api = await request(`${listener.origin}/api/services?${QUERY}`, { headers: { cookie: user.cookie, 'x-csrf-token': user.csrfToken } });
        assert.equal(api.statusCode, 200);
        await api.body.dump();
        requestIds.push(String(api.headers['x-request-id']));
      }
      assert.equal(assertions.length, g.listeners.length, 'the target got an identity assertion each time');

      const spans = await g.receiver.waitForTrace(requestIds[0]!, 'the server span', (all) => all.some((span) => span.kind === 'SERVER'));
      const server = spans.find((span) => span.kind === 'SERVER')!;
      assert.equal(server.attributes['url.query'], 'code=&state=', 'the query\'s keys alone');
      await g.close(); // every process sends what it holds before it stops
      for (const requestId of requestIds) assert.ok(g.receiver.trace(requestId).some((span) => span.kind === 'SERVER'), `request ${requestId} was exported`);

      const secrets = { sessionId, csrf: user.csrfToken, bearer: BEARER, appCookie: APP_COOKIE, ...Object.fromEntries(QUERY_VALUES.map((value, i) => [`query${i}`, value])), ...Object.fromEntries(assertions.map((jwt, i) => [`assertion${i}`, jwt])) };
      for (const [name, secret] of Object.entries(secrets)) {
        const holding = g.receiver.spans.filter((span) => textsOf(span).some((text) => text.includes(secret)));
        assert.deepEqual(holding.map((span) => `${span.kind} ${span.name}`), [], `no span holds the ${name}`);
      }
    });
  });
}

describe('TRACE_QUERY=true', () => {
  let g: TracedGateway;

  before(async () => {
    g = await startTracedGateway('embedded', { TRACE_QUERY: 'true' });
    await g.createService({ name: 'Public', path: '/pub', targetUrl: g.upstream.origin, requireAuth: false });
  });
  after(() => g?.close());

  it('records the query string with its values', async () => {
    const answer = await request(`${g.listeners[0]!.origin}/pub/search?${QUERY}`);
    assert.equal(answer.statusCode, 200);
    await answer.body.dump();
    const requestId = String(answer.headers['x-request-id']);
    const spans = await g.receiver.waitForTrace(requestId, 'the server span', (all) => all.some((span) => span.kind === 'SERVER'));
    assert.equal(spans.find((span) => span.kind === 'SERVER')!.attributes['url.query'], QUERY);
  });
});
