/**
 * design.md §5: a request body the client stops sending never holds an admin-plane request open.
 * Body reads get UPSTREAM_TIMEOUT as their pause limit, as proxied uploads do: 408 `Request
 * timeout`, and the connection is closed.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';

let gw: TestGateway;

before(async () => {
  gw = await startTestGateway({ UPSTREAM_TIMEOUT: '300ms' });
});
after(() => gw.close());

/** Sends a request head announcing 1000 bytes and only `sent` of them; resolves with the raw reply once the gateway closes. */
async function stall(baseUrl: string, head: string, sent: string): Promise<string> {
  const { port } = new URL(baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.setEncoding('latin1');
  let reply = '';
  socket.on('data', (data: string) => (reply += data));
  socket.write(`${head}Host: gateway.test\r\nContent-Length: 1000\r\n\r\n${sent}`);
  await once(socket, 'close');
  return reply;
}

test('a stalled form_post callback on the public port: 408 and the connection closed', async () => {
  const reply = await stall(gw.origin, 'POST /auth/callback HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n', 'state=abc&code=');
  assert.match(reply, /^HTTP\/1\.1 408 /);
  assert.match(reply, /\r\nconnection: close\r\n/i);
  assert.ok(reply.endsWith('{"error":"Request timeout"}'), reply);
});

test('a stalled admin API write on the admin port: 408, and nothing is created', async () => {
  const admin = await signIn(gw);
  const head = `POST /api/services HTTP/1.1\r\nContent-Type: application/json\r\nCookie: ${admin.cookie}\r\nX-CSRF-Token: ${admin.csrfToken}\r\n`;
  const reply = await stall(gw.adminUrl, head, '{"name":"Half","path":"/half","targetUrl":"http://127.0.0.1:9"');
  assert.match(reply, /^HTTP\/1\.1 408 /);
  const list = await fetch(`${gw.adminUrl}/api/services`, { headers: { cookie: admin.cookie } });
  assert.deepEqual(await list.json(), []);
});

test('a stalled logout form: 408, still signed in', async () => {
  const user = await signIn(gw, { isAdmin: false });
  const reply = await stall(gw.origin, `POST /auth/logout HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\nCookie: ${user.cookie}\r\n`, '_csrf=');
  assert.match(reply, /^HTTP\/1\.1 408 /);
  const profile = await fetch(`${gw.origin}/auth/profile`, { headers: { cookie: user.cookie } });
  assert.equal(profile.status, 200);
});
