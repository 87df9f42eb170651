/**
 * What guards a session holds over HTTP/2 as over HTTP/1.1 (README "HTTP/2": "sessions, CSRF,
 * rate limits … work the same"), through a gateway with H2C=true: a logout over h2 without the
 * session's CSRF token is 403 and ends nothing, with it the session ends; the general rate limit
 * counts h2 requests, and its 429 carries `Retry-After` and the request id.
 */
import assert from 'node:assert/strict';
import type { ClientHttp2Session } from 'node:http2';
import { after, before, test } from 'node:test';
import { createService } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let upstream: EchoUpstream;
let gw: TestGateway;
let limited: TestGateway;
const sessions: ClientHttp2Session[] = [];

async function session(origin: string): Promise<ClientHttp2Session> {
  const opened = await openSession(origin);
  sessions.push(opened);
  return opened;
}

before(async () => {
  upstream = await startEchoUpstream();
  [gw, limited] = await Promise.all([startTestGateway({ H2C: 'true' }), startTestGateway({ H2C: 'true', RATE_LIMIT_GENERAL: '3/15m' })]);
  await createService(limited.adminUrl, await signIn(limited), { name: 'Echo', path: '/echo', targetUrl: upstream.origin, requireAuth: false });
});

after(async () => {
  for (const opened of sessions) opened.close();
  await Promise.all([gw?.close(), limited?.close()]);
  await upstream?.close();
});

test('over h2, a logout without the CSRF token is 403 and ends nothing; with it the session ends', async () => {
  const user = await signIn(gw, { sub: 'h2-logout', isAdmin: false });
  const h2 = await session(gw.origin);
  const profile = async () => (await http2Request(h2, { ':path': '/auth/profile', cookie: user.cookie })).status;
  const logout = (headers: Record<string, string>) => http2Request(h2, { ':method': 'POST', ':path': '/auth/logout', cookie: user.cookie, ...headers });

  const forged = await logout({ 'x-csrf-token': 'not-the-token' });
  assert.equal(forged.status, 403);
  assert.deepEqual(JSON.parse(forged.body.toString()), { error: 'Invalid CSRF token' });
  assert.equal(await profile(), 200, 'a forged logout changes nothing');

  const real = await logout({ 'x-csrf-token': user.csrfToken });
  assert.equal(real.status, 302);
  assert.equal(await profile(), 401);
});

test('over h2, the general rate limit counts each request: the fourth of 3/15m is 429 with Retry-After and its request id', async () => {
  const h2 = await session(limited.origin);
  const statuses: number[] = [];
  let refused;
  for (let i = 0; i < 4; i++) {
    const answer = await http2Request(h2, { ':path': `/echo/${i}` });
    statuses.push(answer.status);
    refused = answer;
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  assert.match(String(refused!.headers['retry-after']), /^\d+$/);
  assert.match(String(refused!.headers['x-request-id']), /^[0-9a-f]{16}$/);
});
