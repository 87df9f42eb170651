/**
 * Request ids (README "Tracing", design.md §3.10), in the embedded gateway and in split mode, with
 * tracing off: every answer of the data plane carries `X-Request-Id`, a fresh 16-hex id, whether
 * the target answered (200) or the gateway did (401, 403, 404, 429, 502, 503, 504); its HTML error
 * pages print it; the target receives the same id; a TRUST_PROXY peer's own id is kept (when it is
 * 1–128 visible ASCII characters), anyone else's replaced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import type { SignedIn } from '../support/sessions.js';
import { startTracedGateway, TOPOLOGIES, type TracedGateway, type TracedListener } from '../support/traced-gateway.js';
import { headerValues, rawUpstream, startUpstream, type Echo, type RawUpstream, type Upstream } from '../support/upstream.js';

const FRESH_ID = /^[0-9a-f]{16}$/;

/** An answer's status, its one `X-Request-Id` and its body. */
async function fetchId(url: string, headers: Record<string, string> = {}): Promise<{ status: number; requestId: string; body: string }> {
  const answer = await request(url, { headers });
  const ids = answer.headers['x-request-id'];
  assert.equal(typeof ids, 'string', `one X-Request-Id on ${url}`);
  return { status: answer.statusCode, requestId: ids as string, body: await answer.body.text() };
}

/** The `X-Request-Id` values the echo upstream received with a request. */
const receivedIds = (body: string) => headerValues(JSON.parse(body) as Echo, 'x-request-id');

for (const topology of TOPOLOGIES) {
  describe(`${topology}: request ids`, () => {
    let g: TracedGateway;
    let user: SignedIn;
    let broken: RawUpstream;
    let silent: Upstream;
    let limited: TracedListener;
    let trusting: TracedListener;

    before(async () => {
      [broken, silent] = await Promise.all([rawUpstream('this is no HTTP\r\n\r\n'), startUpstream(() => undefined)]);
      g = await startTracedGateway(topology, { OTEL_TRACES_EXPORTER: 'none', UPSTREAM_TIMEOUT: '2s' });
      const { origin } = g.upstream;
      await g.createService({ name: 'Public', path: '/ok', targetUrl: origin, requireAuth: false });
      await g.createService({ name: 'App', path: '/app', targetUrl: origin, requireAuth: true });
      await g.createService({ name: 'Denied', path: '/denied', targetUrl: origin, requireAuth: true, access: { emails: ['someone-else@example.com'] } });
      await g.createService({ name: 'Broken', path: '/broken', targetUrl: broken.origin, requireAuth: false });
      await g.createService({ name: 'Down', path: '/down', targetUrl: `http://127.0.0.1:${await freePort()}`, requireAuth: false });
      await g.createService({ name: 'Slow', path: '/slow', targetUrl: silent.origin, requireAuth: false }, '/ok/');
      const disabled = await g.createService({ name: 'Disabled', path: '/disabled', targetUrl: origin, requireAuth: false });
      assert.equal((await g.call('PATCH', `/api/services/${disabled}/toggle`, { as: g.admin, json: { enabled: false } })).status, 200);
      await eventually('the service disabled', async () => (await fetchId(`${g.listeners[0]!.origin}/disabled/x`)).status === 503);
      user = await g.signIn({ sub: 'user-sub', email: 'user@example.com', isAdmin: false });
      limited = await g.addListener({ RATE_LIMIT_GENERAL: '1/15m' });
      trusting = await g.addListener({ TRUST_PROXY: 'loopback' });
    });
    after(async () => {
      await g?.close();
      await Promise.all([broken?.close(), silent?.close()]);
    });

    it('every answer, the target\'s and the gateway\'s, carries a fresh id, and the target got the one its client did', async () => {
      const origin = g.listeners[0]!.origin;
      const answers = {
        200: await fetchId(`${origin}/ok/x`),
        401: await fetchId(`${origin}/app/x`, { accept: 'application/json' }),
        403: await fetchId(`${origin}/denied/x`, { cookie: user.cookie, accept: 'application/json' }),
        404: await fetchId(`${origin}/nowhere`),
        502: await fetchId(`${origin}/broken/x`),
        503: await fetchId(`${origin}/down/x`),
        504: await fetchId(`${origin}/slow/x`),
      };
      let limit = await fetchId(`${limited.origin}/ok/x`);
      if (limit.status !== 429) limit = await fetchId(`${limited.origin}/ok/x`); // the first may fit the limit
      const all = { ...answers, 429: limit };
      for (const [status, answer] of Object.entries(all)) {
        assert.equal(answer.status, Number(status), `${status}: ${answer.body}`);
        assert.match(answer.requestId, FRESH_ID, `${status}`);
      }
      assert.equal(new Set(Object.values(all).map((answer) => answer.requestId)).size, 8, 'one id per request');
      assert.deepEqual(receivedIds(answers[200].body), [answers[200].requestId], 'the target got the same id');
      const signedIn = await fetchId(`${origin}/app/x`, { cookie: user.cookie });
      assert.deepEqual([signedIn.status, receivedIds(signedIn.body)], [200, [signedIn.requestId]]);
    });

    it('the gateway\'s HTML error pages print the id to quote', async () => {
      const origin = g.listeners[0]!.origin;
      const html = { accept: 'text/html' };
      const pages = [
        { status: 401, page: await fetchId(`${origin}/app/x`, html) },
        { status: 403, page: await fetchId(`${origin}/denied/x`, { ...html, cookie: user.cookie }) },
        { status: 503, page: await fetchId(`${origin}/disabled/x`, html) },
      ];
      for (const { status, page } of pages) {
        assert.equal(page.status, status);
        assert.match(page.requestId, FRESH_ID);
        assert.ok(page.body.includes(`Request id <code>${page.requestId}</code>: quote it when you report this.`), `${status} page: ${page.body}`);
      }
    });

    it('a TRUST_PROXY peer\'s X-Request-Id is kept; anyone else\'s, or a malformed one, is replaced', async () => {
      const given = 'edge-7f3a:req/42';
      const kept = await fetchId(`${trusting.origin}/ok/kept`, { 'x-request-id': given });
      assert.equal(kept.requestId, given);
      assert.deepEqual(receivedIds(kept.body), [given], 'the target gets the caller\'s id, once');

      const untrusted = await fetchId(`${g.listeners[0]!.origin}/ok/replaced`, { 'x-request-id': given });
      assert.match(untrusted.requestId, FRESH_ID);
      assert.deepEqual(receivedIds(untrusted.body), [untrusted.requestId], 'the client\'s own never reaches the target');

      for (const malformed of ['x'.repeat(129), 'has space']) {
        const replaced = await fetchId(`${trusting.origin}/ok/malformed`, { 'x-request-id': malformed });
        assert.match(replaced.requestId, FRESH_ID, malformed);
        assert.deepEqual(receivedIds(replaced.body), [replaced.requestId]);
      }
    });
  });
}
