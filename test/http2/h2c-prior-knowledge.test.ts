/**
 * `H2C=true` (README "HTTP/2", design.md §4.17): a plain-HTTP PORT takes HTTP/2 with prior
 * knowledge beside HTTP/1.1 on the same port; without it, an HTTP/2 client gets no session and
 * HTTP/1.1 is served as ever.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { createService } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';

let echo: EchoUpstream;
let withH2c: TestGateway;
let without: TestGateway;

before(async () => {
  echo = await startEchoUpstream();
  [withH2c, without] = await Promise.all([startTestGateway({ H2C: 'true' }), startTestGateway()]);
  for (const gw of [withH2c, without]) await createService(gw.adminUrl, await signIn(gw), { name: 'Echo', path: '/echo', targetUrl: echo.origin, requireAuth: false });
});

after(async () => {
  await Promise.all([withH2c?.close(), without?.close()]);
  await echo?.close();
});

describe('H2C=true', () => {
  test('HTTP/2 with prior knowledge is served on the plain port, several streams on one session', async () => {
    const session = await openSession(withH2c.origin);
    try {
      const answers = await Promise.all(['/echo/a', '/echo/b', '/echo/c'].map((path) => http2Request(session, { ':path': path })));
      assert.deepEqual(answers.map((answer) => answer.status), [200, 200, 200]);
      assert.deepEqual(answers.map((answer) => (JSON.parse(answer.body.toString()) as Echo).url), ['/a', '/b', '/c']);
      assert.match(String(answers[0]!.headers['x-request-id']), /^[0-9a-f]{16}$/);
      assert.equal(answers[0]!.headers['strict-transport-security'], undefined, 'no HSTS on plain HTTP');
      const forwarded = echo.requests.at(-1)!;
      assert.ok(forwarded.headers.some(([name, value]) => name === 'x-forwarded-proto' && value === 'http'));
    } finally {
      session.close();
    }
  });

  test('HTTP/1.1 clients are served on the same port, a POST with its body too', async () => {
    const answer = await request(`${withH2c.origin}/echo/h1`, { method: 'POST', body: 'hello' });
    assert.equal(answer.statusCode, 200);
    assert.equal(((await answer.body.json()) as Echo).bodyBytes, 5);
  });
});

describe('without H2C', () => {
  test('an HTTP/2 client\'s request fails (node:http answers its preface 400 and closes); HTTP/1.1 is served', async () => {
    const session = await openSession(without.origin); // connected: TCP is, whatever follows
    try {
      await assert.rejects(http2Request(session, { ':path': '/echo/x' }));
    } finally {
      session.destroy();
    }
    const answer = await request(`${without.origin}/echo/h1`);
    assert.equal(answer.statusCode, 200);
    await answer.body.dump();
  });
});
