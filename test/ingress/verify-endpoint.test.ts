/**
 * design.md §4.19: `GET /auth/verify` asked directly, as an ingress asks it: every outcome, the
 * original request read only from a TRUST_PROXY peer (127.0.0.1 here; a client on 127.0.0.2 is
 * not one), malformed and ambiguous originals, every spelling of a path decided as the proxied
 * request is, a service host's sign-in, the access log and the general rate limit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, request } from 'undici';
import { apiClient, createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { DENIED_SPELLINGS } from '../support/ingress-scenarios.js';
import { rawRequest } from '../support/raw-connection.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';

/** A client that is no trusted proxy: its connections come from 127.0.0.2. */
const untrusted = new Agent({ localAddress: '127.0.0.2' });

describe('GET /auth/verify asked directly', () => {
  let gw: TestGateway;
  let upstream: EchoUpstream;
  let admin: SignedIn;
  let user: SignedIn;
  let appId: string;

  before(async () => {
    upstream = await startEchoUpstream();
    gw = await startTestGateway({ TRUST_PROXY: '127.0.0.1' });
    admin = await signIn(gw);
    user = await signIn(gw, { sub: 'user-sub', email: 'user@example.com', isAdmin: false });
    const target = upstream.origin;
    appId = await createService(gw.adminUrl, admin, { name: 'App', path: '/app', targetUrl: target, rules: [{ paths: ['/internal'], action: 'deny' }] });
    await createService(gw.adminUrl, admin, { name: 'Team', path: '/team', targetUrl: target, access: { emails: ['admin@example.com'] } });
    const off = await createService(gw.adminUrl, admin, { name: 'Off', path: '/off', targetUrl: target });
    assert.equal((await apiClient(gw.adminUrl)('PATCH', `/api/services/${off}/toggle`, { as: admin, json: { enabled: false } })).status, 200);
    await createService(gw.adminUrl, admin, { name: 'Hosted', path: '/', hosts: ['app.example.test'], targetUrl: target });
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
    await untrusted.close();
  });

  /** Asks the verify endpoint with `headers` (a trusted peer unless `dispatcher` says otherwise). */
  const verify = (headers: Record<string, string>, options: { method?: 'GET' | 'HEAD' | 'POST'; dispatcher?: Agent } = {}) =>
    request(`${gw.origin}/auth/verify`, { method: options.method ?? 'GET', headers, ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}) });
  /** The status of the verify endpoint's answer about `uri` for `cookie`. */
  const verdict = async (uri: string, cookie: string, extra: Record<string, string> = {}) => {
    const res = await verify({ 'x-forwarded-uri': uri, cookie, ...extra });
    await res.body.dump();
    return res.statusCode;
  };

  it('answers a caller without a session 401 with the sign-in that returns to the original request', async () => {
    const asked: Record<string, string>[] = [{ 'x-forwarded-uri': '/app/page?q=1' }, { 'x-original-uri': '/app/page?q=1', 'x-original-method': 'GET' }];
    for (const fields of asked) {
      const res = await verify(fields);
      assert.deepEqual(await res.body.json(), { error: 'Not authenticated' });
      assert.equal(res.statusCode, 401);
      assert.equal(res.headers.location, `${gw.origin}/auth/login?returnTo=${encodeURIComponent('/app/page?q=1')}`);
    }
  });

  it('answers a signed-in caller 200 with the identity fields the target gets for the same request', async () => {
    const res = await verify({ 'x-forwarded-uri': '/app/page', cookie: user.cookie });
    await res.body.dump();
    assert.equal(res.statusCode, 200);
    const proxied = await request(`${gw.origin}/app/page`, { headers: { cookie: user.cookie } });
    const echo = (await proxied.body.json()) as Echo;
    assert.equal(res.headers['x-forwarded-user'], 'user-sub');
    assert.equal(res.headers['x-forwarded-email'], 'user@example.com');
    assert.deepEqual([res.headers['x-forwarded-user'], res.headers['x-forwarded-email']], [...headerValues(echo, 'x-forwarded-user'), ...headerValues(echo, 'x-forwarded-email')]);
    const audience = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).aud as string;
    assert.equal(audience(String(res.headers['x-gatehouse-assertion'])), audience(headerValues(echo, 'x-gatehouse-assertion')[0]!));
    assert.equal(res.statusCode === 200 && res.headers['content-length'], '0');
  });

  it('answers 403 for a deny rule and a refusing policy, 503 for a disabled service, 404 where no service or a gateway path is', async () => {
    assert.equal(await verdict('/app/internal', user.cookie), 403);
    assert.equal(await verdict('/team/x', user.cookie), 403);
    assert.equal(await verdict('/team/x', admin.cookie), 200);
    assert.equal(await verdict('/off/x', user.cookie), 503);
    for (const uri of ['/nothing/here', '/auth/login', '/api/services', '/.gatehouse/login', '/AUTH/verify']) assert.equal(await verdict(uri, user.cookie), 404, uri);
  });

  it('answers HEAD like GET without a body, and other methods 405 with Allow', async () => {
    const head = await verify({ 'x-forwarded-uri': '/app/page', cookie: user.cookie }, { method: 'HEAD' });
    assert.equal(head.statusCode, 200);
    assert.equal(await head.body.text(), '');
    const post = await verify({ 'x-forwarded-uri': '/app/page', cookie: user.cookie }, { method: 'POST' });
    await post.body.dump();
    assert.equal(post.statusCode, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
  });

  it('refuses with 400 an original request the data plane would refuse, or one named two ways', async () => {
    for (const uri of ['/app/%2e%2e/internal', '/app/..;/internal', '/app/.%2E/x', 'http://evil.example/app/page', 'app/page', '/app/page#x', '/app/%zz', '/app/%00']) {
      assert.equal(await verdict(uri, user.cookie), 400, uri);
    }
    assert.equal(await verdict('/app/page', user.cookie, { 'x-original-uri': '/app/internal' }), 400);
    assert.equal(await verdict('/app/page', user.cookie, { 'x-forwarded-method': 'GET', 'x-original-method': 'DELETE' }), 400);
    assert.equal(await verdict('/app/page', user.cookie, { 'x-forwarded-method': 'G ET' }), 400);
    assert.equal(await verdict('/', user.cookie, { 'x-forwarded-host': 'app.example.test, other.example' }), 400);
  });

  it("ignores an untrusted peer's forwarding fields: whatever it names, never a 200 nor an identity field", async () => {
    const claims: Record<string, string>[] = [{ 'x-forwarded-uri': '/app/page' }, { 'x-original-uri': '/app/page' }, { 'x-forwarded-uri': '/', 'x-forwarded-host': 'app.example.test' }];
    for (const fields of claims) {
      const res = await verify({ ...fields, cookie: admin.cookie }, { dispatcher: untrusted });
      await res.body.dump();
      assert.equal(res.statusCode, 403);
      assert.equal(res.headers['x-forwarded-user'], undefined);
      assert.equal(res.headers['x-gatehouse-assertion'], undefined);
    }
  });

  it('decides every spelling of a path as the proxied request is decided', async () => {
    for (const spelling of [...DENIED_SPELLINGS, '/app/page', '/APP/Page', '/app/%70age', '/app//page', '/app/page;v=1', '/Team/x']) {
      const proxied = await rawRequest(Number(new URL(gw.origin).port), `GET ${spelling} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${user.cookie}\r\nConnection: close\r\n\r\n`);
      assert.equal(await verdict(spelling, user.cookie), proxied.status, spelling);
    }
  });

  it("sends a caller without a session on a service host to that host's own sign-in path", async () => {
    const port = new URL(gw.origin).port;
    const res = await verify({ 'x-forwarded-uri': '/x?y=1', 'x-forwarded-host': 'App.Example.Test.' });
    await res.body.dump();
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers.location, `http://app.example.test:${port}/.gatehouse/login?rd=${encodeURIComponent('/x?y=1')}`);
  });

  it("answers a trusted ingress that keeps a service host's Host itself: the app there never answers in its place", async () => {
    const res = await request(`${gw.origin}/auth/verify`, { headers: { host: 'app.example.test', 'x-forwarded-uri': '/x' } });
    await res.body.dump();
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers.location, `http://app.example.test:${new URL(gw.origin).port}/.gatehouse/login?rd=%2Fx`);
    assert.deepEqual(upstream.requests.filter((r) => r.url.includes('verify')), []);
  });

  it("takes Envoy ext_authz's form: the original method, and the original path after /auth/verify", async () => {
    const ask = async (method: string, target: string, headers: Record<string, string> = {}, dispatcher?: Agent) => {
      const res = await request(`${gw.origin}/auth/verify${target}`, { method: method as 'GET', headers: { 'content-length': '0', ...headers }, ...(dispatcher ? { dispatcher } : {}) });
      await res.body.dump();
      return { status: res.statusCode, location: res.headers.location, user: res.headers['x-forwarded-user'] };
    };
    assert.deepEqual(await ask('POST', '/app/page?q=1'), { status: 401, location: `${gw.origin}/auth/login?returnTo=${encodeURIComponent('/app/page?q=1')}`, user: undefined });
    assert.equal((await ask('PUT', '/app/page', { cookie: user.cookie })).user, 'user-sub');
    assert.equal((await ask('DELETE', '/APP/%69nternal', { cookie: user.cookie })).status, 403);
    assert.equal((await ask('GET', '/app/page', { cookie: user.cookie, 'x-forwarded-uri': '/app/page' })).status, 400);
    assert.equal((await ask('GET', '/app/page', { cookie: admin.cookie }, untrusted)).status, 403);
    assert.equal((await ask('GET', '/', { host: 'app.example.test' })).location, `http://app.example.test:${new URL(gw.origin).port}/.gatehouse/login?rd=%2F`);
  });

  it('is access-logged with the original method and path, marked as a verify', async () => {
    const res = await verify({ 'x-forwarded-uri': '/app/logged?z=1', 'x-forwarded-method': 'DELETE' });
    await res.body.dump();
    const logs = apiClient(gw.adminUrl);
    let found: Record<string, unknown> | undefined;
    await eventually('the verify record', async () => {
      const page = await logs('GET', `/api/services/${appId}/logs`, { as: admin });
      found = (page.json.logs as Record<string, unknown>[]).find((record) => record.path === '/app/logged?z=1');
      return found !== undefined;
    });
    assert.equal(found!.method, 'DELETE');
    assert.equal(found!.status_code, 401);
    assert.equal(found!.verify, true);
  });
});

describe('GET /auth/verify under the general rate limit', () => {
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway({ TRUST_PROXY: '127.0.0.1', RATE_LIMIT_GENERAL: '2/15m' });
  });
  after(() => gw?.close());

  it('counts each decision: the third in the window is 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(`${gw.origin}/auth/verify`, { headers: { 'x-forwarded-uri': '/none' } });
      await res.body.dump();
      statuses.push(res.statusCode);
    }
    assert.deepEqual(statuses, [404, 404, 429]);
  });
});
