/**
 * HTTP/2 on the gateway's TLS listener (README "HTTP/2", design.md §4.17): ALPN offers `h2` before
 * `http/1.1`, a protected service is browsed with a session cookie over one connection by
 * node:http2's client and by curl, `:authority` is the Host (routing by host included), a `Host`
 * that disagrees with it gets 400, and HTTP/1.1 clients are served as before on the same port.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ClientHttp2Session } from 'node:http2';
import { Agent, request } from 'undici';
import { apiClient, createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { makeTestCa } from '../support/test-certificates.js';
import { handshake } from '../support/tls-client.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';

let dir: string;
let caFile: string;
let caPem: Buffer;
let gw: TestGateway;
let echo: EchoUpstream;
let origin: string;
let user: SignedIn;
let session: ClientHttp2Session;
let admin: SignedIn;
let echoId: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-h2-'));
  const ca = makeTestCa(dir);
  caFile = ca.caFile;
  caPem = readFileSync(ca.caFile);
  const pair = ca.issue('default', ['localhost', 'app.localhost']);
  echo = await startEchoUpstream();
  const port = await freePort();
  origin = `https://localhost:${port}`;
  gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: origin, TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key, ADMIN_EMAILS: 'admin@example.com' });
  admin = await signIn(gw);
  echoId = await createService(gw.adminUrl, admin, { name: 'Echo', path: '/echo', targetUrl: echo.origin, requireAuth: true });
  await createService(gw.adminUrl, admin, { name: 'App host', path: '/', hosts: ['app.localhost'], targetUrl: `${echo.origin}/on-host`, requireAuth: false });
  user = await signIn(gw, { sub: 'h2-user', email: 'h2@example.com', isAdmin: false });
  session = await openSession(origin, { ca: caPem });
});

after(async () => {
  session?.close();
  await gw?.close();
  await echo?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The echo of a 200 answer's body. */
function echoed(body: Buffer): Echo {
  return JSON.parse(body.toString('utf8')) as Echo;
}

describe('ALPN', () => {
  test('h2 is chosen when offered, http/1.1 for a client offering only it, and h2 wins over http/1.1', async () => {
    for (const [offered, chosen] of [[['h2', 'http/1.1'], 'h2'], [['http/1.1', 'h2'], 'h2'], [['http/1.1'], 'http/1.1']] as const) {
      const socket = await handshake(Number(new URL(origin).port), caPem, 'localhost', { ALPNProtocols: [...offered] });
      assert.equal(socket.alpnProtocol, chosen, `offered ${offered.join(', ')}`);
      socket.destroy();
    }
  });
});

describe('a protected service over one HTTP/2 connection', () => {
  test('node:http2 with the session cookie: 50 requests as concurrent streams of one session all reach the target', async () => {
    const before = echo.requests.length;
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) => http2Request(session, { ':path': `/echo/page/${i}`, cookie: user.cookie, accept: 'application/json' })),
    );
    for (const [i, answer] of answers.entries()) {
      assert.equal(answer.status, 200, `stream ${i}`);
      assert.equal(echoed(answer.body).url, `/page/${i}`);
      assert.match(String(answer.headers['x-request-id']), /^[0-9a-f]{16}$/, 'the request id reaches an HTTP/2 answer');
      assert.equal(answer.headers['strict-transport-security'], 'max-age=31536000');
    }
    assert.equal(echo.requests.length - before, 50);
    const forwarded = echo.requests.at(-1)!;
    assert.deepEqual(headerValues(forwarded, 'x-forwarded-user'), ['h2-user']);
    assert.deepEqual(headerValues(forwarded, 'x-forwarded-proto'), ['https']);
    assert.ok(!forwarded.headers.some(([name]) => name.startsWith(':')), 'no pseudo-header field is forwarded');
  });

  test('without the cookie: 401, the same answer as over HTTP/1.1', async () => {
    const answer = await http2Request(session, { ':path': '/echo/x', accept: 'application/json' });
    assert.equal(answer.status, 401);
    assert.deepEqual(JSON.parse(answer.body.toString()), { error: 'Not authenticated' });
  });

  test('curl --http2 browses three pages over one connection, each answered over HTTP/2', async () => {
    const urls = ['/echo/a', '/echo/b', '/echo/c'].map((path) => `${origin}${path}`);
    // Not execFileSync: the gateway answering curl runs in this process's event loop.
    const stdout = await new Promise<string>((resolve, reject) => {
      const args = ['-sS', '--http2', '--max-time', '20', '--cacert', caFile, '-H', `Cookie: ${user.cookie}`, ...urls.flatMap(() => ['-o', '/dev/null']), '-w', '%{http_version} %{response_code} %{num_connects}\\n', ...urls];
      execFile('curl', args, (error, out, stderr) => (error ? reject(new Error(`curl: ${stderr}`)) : resolve(out)));
    });
    assert.deepEqual(stdout.trim().split('\n'), ['2 200 1', '2 200 0', '2 200 0'], 'HTTP/2, 200, one connection opened for the three');
  });
});

describe(':authority is the Host', () => {
  test('a service host is routed by :authority', async () => {
    const answer = await http2Request(session, { ':path': '/x', ':authority': `app.localhost:${new URL(origin).port}` });
    assert.equal(answer.status, 200);
    assert.equal(echoed(answer.body).url, '/on-host/x');
  });

  test('a Host field that names another host than :authority gets 400; one that agrees is served', async () => {
    // node:http2's client sends a `host` it is given instead of `:authority`: both are set here.
    const authority = new URL(origin).host;
    const disagreeing = await http2Request(session, { ':path': '/echo/x', ':authority': authority, host: 'app.localhost', cookie: user.cookie, accept: 'application/json' });
    assert.equal(disagreeing.status, 400);
    assert.deepEqual(JSON.parse(disagreeing.body.toString()), { error: 'Bad request' });
    const agreeing = await http2Request(session, { ':path': '/echo/x', ':authority': authority, host: authority.toUpperCase(), cookie: user.cookie });
    assert.equal(agreeing.status, 200);
    const followUp = await http2Request(session, { ':path': '/echo/y', cookie: user.cookie });
    assert.equal(followUp.status, 200, 'the connection goes on after a 400 on one stream');
  });
});

describe('HTTP/1.1 on the same port', () => {
  test('a client offering only http/1.1 is served as before', async () => {
    const agent = new Agent({ connect: { ca: caPem } });
    try {
      const answer = await request(`${origin}/echo/h1`, { headers: { cookie: user.cookie }, dispatcher: agent });
      assert.equal(answer.statusCode, 200);
      assert.equal(echoed(Buffer.from(await answer.body.arrayBuffer())).url, '/h1');
      assert.match(String(answer.headers['x-request-id']), /^[0-9a-f]{16}$/);
    } finally {
      await agent.close();
    }
  });
});

describe('the access log', () => {
  test('records say which protocol the client spoke: h2 or http/1.1', async () => {
    const overH2 = await http2Request(session, { ':path': '/echo/logged-h2', cookie: user.cookie });
    const agent = new Agent({ connect: { ca: caPem } });
    const overH1 = await request(`${origin}/echo/logged-h1`, { headers: { cookie: user.cookie }, dispatcher: agent });
    await overH1.body.dump();
    await agent.close();
    const api = apiClient(gw.adminUrl);
    const wanted = new Map([[String(overH2.headers['x-request-id']), 'h2'], [String(overH1.headers['x-request-id']), 'http/1.1']]);
    let seen = new Map<string, string>();
    await eventually('both records stored', async () => {
      const page = await api('GET', `/api/services/${echoId}/logs?limit=1000`, { as: admin });
      seen = new Map((page.json.logs as { request_id: string; protocol: string }[]).map((log) => [log.request_id, log.protocol]));
      return [...wanted.keys()].every((id) => seen.has(id));
    });
    for (const [id, protocol] of wanted) assert.equal(seen.get(id), protocol, id);

    const logView = await api('GET', `/dashboard/services/${echoId}?requestId=${String(overH2.headers['x-request-id'])}`, { as: admin });
    assert.match(logView.text, /<td data-label="Method"><code>GET<\/code> <span class="muted" title="Over HTTP\/2">h2<\/span><\/td>/, "the console's log view says h2");
    const h1Row = await api('GET', `/dashboard/services/${echoId}?requestId=${String(overH1.headers['x-request-id'])}`, { as: admin });
    assert.match(h1Row.text, /<td data-label="Method"><code>GET<\/code><\/td>/);
  });
});
