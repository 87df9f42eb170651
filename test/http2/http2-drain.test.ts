/**
 * Stopping the gateway with HTTP/2 clients connected (README "Stopping", design.md §4.17): each
 * session gets GOAWAY (RFC 9113 §6.8), the stream in flight finishes with its whole answer, the
 * session takes no new stream, and the stop completes once it is done, well before the drain limit.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { createService } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { signIn } from '../support/sessions.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

const SLOW_MS = 500;

let upstream: Upstream;
let gw: TestGateway;
/** Resolves when the slow target has a request in hand. */
let received: Promise<void>;
let markReceived: () => void;

before(async () => {
  received = new Promise((resolve) => (markReceived = resolve));
  upstream = await startUpstream((_req, res) => {
    markReceived();
    setTimeout(() => res.writeHead(200, { 'content-type': 'text/plain' }).end('finished'), SLOW_MS);
  });
  gw = await startTestGateway({ H2C: 'true' });
  await createService(gw.adminUrl, await signIn(gw), { name: 'Slow', path: '/slow', targetUrl: upstream.origin, requireAuth: false });
});

after(() => upstream?.close());

test('a stop sends GOAWAY: the stream in flight gets its whole answer, no new stream is taken, the stop ends with it', async () => {
  const session = await openSession(gw.origin);
  const goaway = once(session, 'goaway');
  const inFlight = http2Request(session, { ':path': '/slow/work' });
  await received;

  const started = Date.now();
  const stopped = gw.close();
  await goaway;
  await assert.rejects(http2Request(session, { ':path': '/slow/late' }), 'a stream opened after GOAWAY is not served');

  const answer = await inFlight;
  assert.equal(answer.status, 200);
  assert.equal(answer.body.toString(), 'finished');
  await stopped;
  assert.ok(Date.now() - started < 5_000, `the stop took ${Date.now() - started} ms`);
  session.destroy();
});
