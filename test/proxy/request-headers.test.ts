import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decodeJwt } from 'jose';
import { rawRequest } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { echo, headerValues, startUpstream, type Echo, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/** Sends `GET <target>` with `lines` as raw header lines, over a connection of its own. */
async function rawEcho(gateway: TestDataPlane, target: string, lines: string[], extra = ''): Promise<Echo> {
  const head = [`GET ${target} HTTP/1.1`, 'Host: public.example:8080', ...lines].join('\r\n');
  const response = await rawRequest(gateway.port, `${head}\r\n\r\n${extra}`);
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body) as Echo;
}

/** Header names compared the way an upstream stack might fold them: lowercase, `_` as `-`. */
function folded(received: Echo, name: string): string[] {
  return received.headers.filter(([key]) => key.toLowerCase().replaceAll('_', '-') === name).map(([, value]) => value);
}

const SPOOFED = [
  'X-Forwarded-User: evil',
  'x-forwarded-user: evil',
  'X_Forwarded_User: evil',
  'x_FORWARDED_user: evil',
  'X-FORWARDED-USER: evil',
  'x-FORWARDED-email: evil@example.com',
  'X_Forwarded_Email: evil@example.com',
  'X-Forwarded-Email: evil@example.com',
  'X-Forwarded-For: 6.6.6.6',
  'x_forwarded_for: 6.6.6.6',
  'X-Forwarded-Host: evil.example',
  'X_Forwarded_Host: evil.example',
  'X-Forwarded-Proto: https',
  'X-Forwarded-Prefix: /evil',
  'X-Forwarded-Port: 1',
  'X-Forwarded-Groups: admins',
  'X-Forwarded-Access-Token: stolen',
  'Forwarded: for=6.6.6.6;proto=https',
  'FORWARDED: for=6.6.6.6',
  'X-Real-IP: 6.6.6.6',
  'x_real_ip: 6.6.6.6',
  'X-Original-URL: /evil',
  'X-Rewrite-URL: /evil',
  'X-Gatehouse-Assertion: evil.forged.jwt',
  'x_gatehouse_assertion: evil.forged.jwt',
  'X_GATEHOUSE_ASSERTION: evil.forged.jwt',
  'x-gatehouse-ASSERTION: evil.forged.jwt',
];

describe('request headers sent upstream', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({
      services: [
        service({ path: '/app', targetUrl: upstream.origin }),
        service({ path: '/private', targetUrl: upstream.origin, requireAuth: true }),
        service({ path: '/', targetUrl: upstream.origin }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('never lets a client-sent identity or forwarding header through, in any case or with _ for -', async () => {
    const received = await rawEcho(gateway, '/app/x', [...SPOOFED, 'Connection: close']);
    assert.deepEqual(folded(received, 'x-forwarded-user'), []);
    assert.deepEqual(folded(received, 'x-forwarded-email'), []);
    assert.deepEqual(folded(received, 'x-forwarded-for'), ['127.0.0.1']);
    assert.deepEqual(folded(received, 'x-forwarded-host'), [gateway.config.publicUrl.host]);
    assert.deepEqual(folded(received, 'x-forwarded-proto'), ['http']);
    assert.deepEqual(folded(received, 'x-forwarded-prefix'), ['/app']);
    for (const name of ['x-forwarded-port', 'x-forwarded-groups', 'x-forwarded-access-token', 'forwarded', 'x-real-ip', 'x-original-url', 'x-rewrite-url', 'x-gatehouse-assertion']) {
      assert.deepEqual(folded(received, name), [], name);
    }
    assert.equal(JSON.stringify(received).includes('evil'), false);
    assert.equal(JSON.stringify(received).includes('6.6.6.6'), false);
  });

  it('sends only the session identity, never a spoofed one, for a signed-in user', async () => {
    const cookie = await gateway.signIn({ sub: 'real-sub', email: 'real@example.com', groups: ['staff'] });
    const received = await rawEcho(gateway, '/private/x', [...SPOOFED, `Cookie: ${cookie}`, 'Connection: close']);
    assert.deepEqual(folded(received, 'x-forwarded-user'), ['real-sub']);
    assert.deepEqual(folded(received, 'x-forwarded-email'), ['real@example.com']);
    assert.deepEqual(folded(received, 'x-forwarded-groups'), [], 'groups only with FORWARD_GROUPS=true');
    const [assertion, ...more] = folded(received, 'x-gatehouse-assertion');
    assert.deepEqual(more, [], 'exactly one identity assertion: the gateway\'s');
    assert.equal(decodeJwt(assertion!).sub, 'real-sub');
    assert.equal(JSON.stringify(received).includes('evil'), false);
  });

  it("removes the gateway's cookies and keeps the others", async () => {
    const received = await rawEcho(gateway, '/app/x', [
      'Cookie: a=1; gw_session=abc; __Host-gw_session=def; gw_oidc=ghi; __Host-gw_oidc=jkl; b=2',
      'Cookie: gw_session=again; c=3',
      'Connection: close',
    ]);
    assert.deepEqual(headerValues(received, 'cookie'), ['a=1; b=2', 'c=3']);
    assert.equal(JSON.stringify(received).includes('gw_'), false);
  });

  it('drops the Cookie header when only gateway cookies were in it', async () => {
    const cookie = await gateway.signIn();
    const received = await rawEcho(gateway, '/app/x', [`Cookie: ${cookie}; gw_oidc=x`, 'Connection: close']);
    assert.deepEqual(headerValues(received, 'cookie'), []);
  });

  it("never forwards the gateway's admin API tokens (ght_…), keeping the app's own Authorization", async () => {
    const withToken = await rawEcho(gateway, '/app/x', ['Authorization: bearer ght_c2VjcmV0LXRva2VuLXZhbHVlLWZvci10ZXN0aW5n', 'Connection: close']);
    assert.deepEqual(folded(withToken, 'authorization'), []);
    const basic = await rawEcho(gateway, '/app/x', ['Authorization: Basic YWRhOnB3', 'Connection: close']);
    assert.deepEqual(folded(basic, 'authorization'), ['Basic YWRhOnB3']);
    const appToken = await rawEcho(gateway, '/app/x', ['Authorization: Bearer app-token', 'Connection: close']);
    assert.deepEqual(folded(appToken, 'authorization'), ['Bearer app-token']);
  });

  it('strips X-CSRF-Token', async () => {
    const received = await rawEcho(gateway, '/app/x', ['X-CSRF-Token: secret', 'x_csrf_token: secret', 'Connection: close']);
    assert.deepEqual(folded(received, 'x-csrf-token'), []);
  });

  it('strips hop-by-hop headers and those named in Connection, keeping end-to-end ones', async () => {
    const received = await rawEcho(gateway, '/app/x', [
      'Connection: close, X-Hop-One, x_hop_two',
      'X-Hop-One: 1',
      'X-Hop-Two: 2',
      'Keep-Alive: timeout=5',
      'Proxy-Connection: keep-alive',
      'TE: trailers',
      'Trailer: X-Checksum',
      'Upgrade: websocket',
      'Proxy-Authorization: Basic cHJveHk6c2VjcmV0',
      'Proxy-Authenticate: Basic',
      'Authorization: Bearer end-to-end',
      'X-Custom: kept',
      'X-Custom: twice',
      'Accept: text/plain',
    ]);
    assert.deepEqual(headerValues(received, 'connection'), ['keep-alive'], "undici's own, not the client's");
    for (const name of ['x-hop-one', 'x-hop-two', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'proxy-authorization', 'proxy-authenticate']) {
      assert.deepEqual(headerValues(received, name), [], name);
    }
    assert.deepEqual(headerValues(received, 'authorization'), ['Bearer end-to-end']);
    assert.deepEqual(headerValues(received, 'x-custom'), ['kept', 'twice']);
    assert.deepEqual(headerValues(received, 'accept'), ['text/plain']);
    assert.deepEqual(headerValues(received, 'host'), [`127.0.0.1:${upstream.port}`]);
  });

  it('streams a chunked request body with its own framing', async () => {
    const received = await rawEcho(
      gateway,
      '/app/upload',
      ['Transfer-Encoding: chunked', 'Connection: close'],
      '5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    );
    assert.equal(received.bodyBytes, 11);
    // undici frames it afresh: chunked, or Content-Length when the whole body had already arrived.
    const framing = [...headerValues(received, 'transfer-encoding'), ...headerValues(received, 'content-length')];
    assert.equal(framing.length, 1, String(framing));
  });

  it('answers Expect: 100-continue itself and forwards the body without Expect', async () => {
    const head = ['POST /app/upload HTTP/1.1', 'Host: a', 'Expect: 100-continue', 'Content-Length: 4', 'Connection: close'];
    const response = await rawRequest(gateway.port, `${head.join('\r\n')}\r\n\r\nbody`);
    assert.equal(response.status, 100);
    const finalReply = response.body.slice(response.body.indexOf('{'));
    const received = JSON.parse(finalReply) as Echo;
    assert.equal(received.bodyBytes, 4);
    assert.deepEqual(headerValues(received, 'expect'), []);
    assert.deepEqual(headerValues(received, 'content-length'), ['4']);
  });

  it('sets X-Forwarded-For/Proto/Host/Prefix for an anonymous request', async () => {
    const response = await gateway.fetch('/app/x', { headers: { 'x-forwarded-for': '10.9.9.9' } });
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-for'), ['127.0.0.1']);
    assert.deepEqual(headerValues(received, 'x-forwarded-proto'), ['http']);
    assert.deepEqual(headerValues(received, 'x-forwarded-host'), [gateway.config.publicUrl.host]);
    assert.deepEqual(headerValues(received, 'x-forwarded-prefix'), ['/app']);
    const root = (await gateway.fetch('/elsewhere')).json<Echo>();
    assert.deepEqual(headerValues(root, 'x-forwarded-prefix'), []);
  });
});

describe('X-Forwarded-Groups (FORWARD_GROUPS=true)', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({
      env: { FORWARD_GROUPS: 'true', TRUST_PROXY: 'loopback' },
      services: [service({ path: '/private', targetUrl: upstream.origin, requireAuth: true })],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  const GROUPS = ['staff', 'a,b', 'Domain Users', '100%', 'équipe', 'ops\r\nX-Forwarded-User: evil'];
  const SENT = 'staff,a%2Cb,Domain Users,100%25,%C3%A9quipe,ops%0D%0AX-Forwarded-User: evil';

  it("sends the caller's groups, one field, each name's comma, % and what is not printable ASCII percent-encoded; a client's never", async () => {
    const cookie = await gateway.signIn({ sub: 'grouped', groups: GROUPS });
    const received = await rawEcho(gateway, '/private/x', [...SPOOFED, `Cookie: ${cookie}`, 'Connection: close']);
    assert.deepEqual(folded(received, 'x-forwarded-groups'), [SENT]);
    assert.deepEqual(SENT.split(',').map(decodeURIComponent), GROUPS, 'a target gets every name back by splitting on commas and decoding');
    assert.deepEqual(folded(received, 'x-forwarded-user'), ['grouped']);
  });

  it("sends none for a caller without groups, and never a client's", async () => {
    const cookie = await gateway.signIn({ sub: 'no-groups', groups: [] });
    assert.deepEqual(folded(await rawEcho(gateway, '/private/x', [`Cookie: ${cookie}`, 'X-Forwarded-Groups: admins', 'Connection: close']), 'x-forwarded-groups'), []);
  });

  it("answers an ingress's /auth/verify with the same field", async () => {
    const cookie = await gateway.signIn({ sub: 'grouped', groups: GROUPS });
    const response = await gateway.fetch('/auth/verify', { headers: { cookie, 'x-forwarded-uri': '/private/x', 'x-forwarded-host': 'public.example' } });
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-forwarded-groups'], SENT);
  });
});

describe('request headers behind a trusted proxy (TRUST_PROXY)', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({
      env: { TRUST_PROXY: 'loopback' },
      services: [service({ path: '/app', targetUrl: upstream.origin })],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('keeps the trusted chain, appends the peer and believes its X-Forwarded-Proto', async () => {
    const received = (
      await gateway.fetch('/app/x', { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.2', 'x-forwarded-proto': 'https' } })
    ).json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-for'), ['203.0.113.7, 10.0.0.2, 127.0.0.1']);
    assert.deepEqual(headerValues(received, 'x-forwarded-proto'), ['https']);
  });

  it('uses the peer alone when the trusted proxy sent no chain, and ignores a nonsense proto', async () => {
    const received = (await gateway.fetch('/app/x', { headers: { 'x-forwarded-proto': 'gopher' } })).json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-for'), ['127.0.0.1']);
    assert.deepEqual(headerValues(received, 'x-forwarded-proto'), ['http']);
  });
});
