/**
 * The split-mode hand-off of gateway-owned paths to the admin process (proxy/forward/admin-handoff.ts),
 * through the data plane's own forwarder: what the admin process receives (the gateway's cookies
 * and CSRF token, forwarding fields by TRUST_PROXY, the body after `100 Continue`), what the
 * client receives (the admin plane's cookies and redirects as they are), and the answers when the
 * admin process hangs or breaks. A real HTTP server stands in for the admin process.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { PUBLIC_HANDOFF_HEADER } from '../../shared/http/gateway-paths.js';
import { startHandedOffGateway } from '../support/handed-off-data-plane.js';
import { openRawConnection } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { echo, headerValues, startEchoUpstream, startUpstream, type Echo, type EchoUpstream, type Upstream } from '../support/upstream.js';
import type { TestDataPlane } from '../support/data-plane.js';

const PUBLIC_URL = 'https://gateway.example';
const UPSTREAM_TIMEOUT_MS = 300;

/** The admin plane's answer to a finished sign-in: its cookies, one of them the session's. */
const SIGN_IN_COOKIES = ['gw_session=abc123; HttpOnly; SameSite=Lax', 'gw_oidc=; Max-Age=0; Path=/auth; HttpOnly'];

/** Fires `hang` when a request to `/auth/hang` arrives (it is never answered). */
const adminEvents = new EventEmitter();

/**
 * Stands in for the admin process: `/auth/callback` signs in (302 with Set-Cookie), `/auth/hang`
 * never answers, `/auth/broken` drops the connection, anything else is echoed.
 */
function adminProcess(req: IncomingMessage, res: ServerResponse): void {
  if (req.url === '/auth/callback') {
    res.writeHead(302, { location: '/dashboard?welcome=1', 'set-cookie': SIGN_IN_COOKIES }).end();
  } else if (req.url === '/auth/hang') {
    adminEvents.emit('hang');
  } else if (req.url === '/auth/broken') {
    req.socket.destroy();
  } else {
    echo(req, res);
  }
}

describe('hand-off to the admin process', { timeout: 20_000 }, () => {
  let admin: Upstream;
  let upstream: EchoUpstream;
  /** TRUST_PROXY=loopback: the test client is a trusted proxy. The tests' gateway unless said. */
  let gateway: TestDataPlane;
  /** No TRUST_PROXY: the test client is the client. */
  let untrusting: TestDataPlane;

  before(async () => {
    admin = await startUpstream(adminProcess);
    upstream = await startEchoUpstream();
    const env = { PUBLIC_URL, UPSTREAM_TIMEOUT: `${UPSTREAM_TIMEOUT_MS}ms` };
    const services = [service({ path: '/app', targetUrl: upstream.origin })];
    gateway = await startHandedOffGateway(admin, { ...env, TRUST_PROXY: 'loopback' }, services);
    untrusting = await startHandedOffGateway(admin, env, services);
  });
  after(async () => {
    await gateway.close();
    await untrusting.close();
    await admin.close();
    await upstream.close();
  });

  it("passes the gateway's cookies and X-CSRF-Token to the admin process, and sets the public-origin mark itself", async () => {
    const response = await gateway.fetch('/api/services', {
      method: 'POST',
      headers: {
        cookie: 'gw_session=s3ss10n; theme=dark',
        'x-csrf-token': 'csrf-from-the-page',
        [PUBLIC_HANDOFF_HEADER]: 'from-the-client',
        'x-forwarded-user': 'spoofed',
        'x-gatehouse-assertion': 'spoofed',
        'content-type': 'application/json',
      },
      body: '{"name":"Echo"}',
    });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.equal(received.url, '/api/services');
    assert.deepEqual(headerValues(received, 'cookie'), ['gw_session=s3ss10n; theme=dark']);
    assert.deepEqual(headerValues(received, 'x-csrf-token'), ['csrf-from-the-page']);
    assert.deepEqual(headerValues(received, PUBLIC_HANDOFF_HEADER), ['1'], "the client's copy is replaced");
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), [], 'a client-sent identity field never passes');
    assert.deepEqual(headerValues(received, 'x-gatehouse-assertion'), [], 'nor a client-sent identity assertion');
    assert.equal(received.bodyBytes, '{"name":"Echo"}'.length);
  });

  it("gives the admin process X-Forwarded-Proto as a TRUST_PROXY peer says, otherwise the connection's, and the client's address", async () => {
    const sent = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' };
    const fromTrusted = (await gateway.fetch('/auth/login', { headers: sent })).json<Echo>();
    assert.deepEqual(headerValues(fromTrusted, 'x-forwarded-proto'), ['https']);
    assert.deepEqual(headerValues(fromTrusted, 'x-forwarded-for'), ['203.0.113.9'], 'the address the proxy resolved, not the chain');
    const fromAnyone = (await untrusting.fetch('/auth/login', { headers: sent })).json<Echo>();
    assert.deepEqual(headerValues(fromAnyone, 'x-forwarded-proto'), ['http']);
    assert.deepEqual(headerValues(fromAnyone, 'x-forwarded-for'), ['127.0.0.1']);
  });

  it("relays the admin plane's Set-Cookie (gw_session among them) and Location to the client unmapped", async () => {
    const response = await gateway.fetch('/auth/callback');
    assert.equal(response.status, 302);
    assert.equal(response.headers.location, '/dashboard?welcome=1');
    assert.deepEqual(response.headers['set-cookie'], SIGN_IN_COOKIES);
  });

  it('answers Expect: 100-continue itself, then streams the body to the admin process', async () => {
    const body = 'x'.repeat(64 * 1024);
    const connection = await openRawConnection(gateway.port);
    try {
      connection.write(
        `POST /api/upload HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      assert.equal((await connection.next({ interim: true })).statusLine, 'HTTP/1.1 100 Continue');
      connection.write(body);
      const final = await connection.next();
      assert.equal(final.status, 200, final.body);
      const received = JSON.parse(final.body) as Echo;
      assert.equal(received.bodyBytes, body.length);
      assert.deepEqual(headerValues(received, 'expect'), [], 'Expect is not forwarded');
    } finally {
      connection.close();
    }
  });

  it('answers 504 Gateway timeout after UPSTREAM_TIMEOUT when the admin process hangs; proxied traffic carries on meanwhile', async () => {
    const arrived = once(adminEvents, 'hang');
    const started = Date.now();
    const hanging = gateway.fetch('/auth/hang');
    await arrived;
    assert.equal((await gateway.fetch('/app/during-the-hang')).status, 200);
    const response = await hanging;
    assert.equal(response.status, 504);
    assert.deepEqual(response.json(), { error: 'Gateway timeout' });
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= UPSTREAM_TIMEOUT_MS - 10 && elapsed < 5_000, `${elapsed} ms`);
  });

  it('answers 502 Bad gateway when the admin process drops the connection', async () => {
    const response = await gateway.fetch('/auth/broken');
    assert.equal(response.status, 502);
    assert.deepEqual(response.json(), { error: 'Bad gateway' });
  });

  it('writes no access-log record for a handed-off request: those are no service\'s', async () => {
    assert.equal((await gateway.fetch('/auth/broken')).status, 502);
    assert.equal((await gateway.fetch('/auth/login')).status, 200);
    assert.equal((await gateway.fetch('/app/after')).status, 200);
    await gateway.waitForRecord((record) => record.path === '/app/after');
    const paths = gateway.records.map((record) => record.path);
    assert.ok(paths.every((path) => path.startsWith('/app/')), paths.join(', '));
  });
});
