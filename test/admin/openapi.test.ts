/**
 * The admin API's OpenAPI description (design.md §4.10): `GET /api/openapi.json` is a valid OpenAPI
 * 3.1 document, served without credentials wherever the admin API is; it names every JSON route of
 * admin/routes/route-table.ts; and the running gateway's real answers, good and bad, to a signed-in administrator
 * (through the identity provider), a non-admin, API tokens and anonymous callers are what it says
 * (test/support/openapi-checker.ts checks each one).
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { MAX_JSON_BODY_BYTES } from '../../admin/http/request-body.js';
import { buildRouter, type RouteHandlers } from '../../admin/routes/route-table.js';
import { pathTemplate } from '../../admin/openapi/document.js';
import type { ServedOrigin } from '../../admin/http/served-origin.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway } from '../support/gateway.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';
import { checkedApiClient, OpenApiChecker, openApiErrors } from '../support/openapi-checker.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

/** A session cookie and its CSRF token. */
type Credentials = { cookie: string; csrfToken: string };

/** The routes of admin/routes/route-table.ts that answer HTML or a redirect, not JSON: the console's pages, sign-in and sign-out. */
const NOT_JSON = [
  'GET /',
  'GET /favicon.ico',
  'GET /auth/login-page',
  'GET /auth/login',
  'POST /auth/callback',
  'GET /auth/callback',
  'GET /auth/logout',
  'POST /auth/logout',
  'POST /auth/backchannel-logout',
  'GET /auth/sessions',
  'POST /auth/sessions/revoke',
  'POST /auth/sessions/revoke-others',
  'GET /dashboard/sessions',
  'GET /dashboard',
  'GET /dashboard/',
  'GET /dashboard/audit',
  'GET /dashboard/tokens',
  'GET /dashboard/certificates',
  'GET /dashboard/services/new',
  'GET /dashboard/services/:id',
  'GET /dashboard/services/:id/edit',
  'GET /dashboard/assets/:file',
];

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

let env: GatewayWithProvider;
let upstream: EchoUpstream;
let document: any;
let checker: OpenApiChecker;
let call: ReturnType<typeof checkedApiClient>;
let admin: Credentials;
let member: Credentials;

/** Signs `email` in through the identity provider; its session cookie and CSRF token. */
async function signInThroughProvider(email: string): Promise<Credentials> {
  const result = await env.login(email);
  assert.equal(result.status, 302, result.body);
  const cookie = result.jar.header(env.gw.origin);
  const csrf = await call('GET', '/auth/csrf-token', { as: { cookie, csrfToken: '' } });
  assert.equal(csrf.status, 200, csrf.text);
  return { cookie, csrfToken: csrf.json.csrfToken };
}

before(async () => {
  upstream = await startEchoUpstream();
  env = await startGatewayWithProvider({ UPSTREAM_TIMEOUT: '1s' });
  const served = await apiClient(env.gw.adminUrl)('GET', '/api/openapi.json');
  assert.equal(served.status, 200, served.text);
  document = served.json;
  checker = new OpenApiChecker(document);
  call = checkedApiClient(env.gw.origin, checker);
  admin = await signInThroughProvider('admin@example.com');
  member = await signInThroughProvider('user@example.com');
});

after(async () => {
  await env?.close();
  await upstream?.close();
});

describe('the document', () => {
  it('is valid OpenAPI 3.1, and the validator refuses a broken one', async () => {
    assert.equal(document.openapi, '3.1.1');
    assert.deepEqual(await openApiErrors(document), []);
    const broken = structuredClone(document);
    delete broken.paths['/api/services'].get.responses['200'].description;
    assert.notDeepEqual(await openApiErrors(broken), []);
  });

  it('is served without credentials on the public origin too while ADMIN_URL is unset, the same', async () => {
    const response = await call('GET', '/api/openapi.json');
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, document);
    assert.equal(document.components.securitySchemes.sessionCookie.name, 'gw_session');
  });

  it('names every JSON route of admin/routes/route-table.ts, and nothing else', () => {
    const noop = () => undefined;
    const handlers = new Proxy({}, { get: () => new Proxy({}, { get: () => noop }) }) as unknown as RouteHandlers;
    const routes = buildRouter(handlers, { kind: 'public', servesConsole: true } as ServedOrigin).routes();
    const json = routes.filter((r) => !NOT_JSON.includes(`${r.method} ${r.pattern}`)).map((r) => `${r.method} ${pathTemplate(r.pattern)}`);
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item as object).map((method) => `${method.toUpperCase()} ${path}`),
    );
    assert.deepEqual(json.sort(), documented.sort());
  });

  it('with ADMIN_URL, is served on that origin only, naming its session cookie', async () => {
    const adminPort = await freePort();
    const gw = await startTestGateway({ ADMIN_PORT: String(adminPort), ADMIN_URL: `http://127.0.0.1:${adminPort}` });
    try {
      const onAdmin = await apiClient(gw.adminUrl)('GET', '/api/openapi.json');
      assert.equal(onAdmin.status, 200);
      assert.equal(onAdmin.json.components.securitySchemes.sessionCookie.name, 'gw_admin_session');
      const onPublic = await apiClient(gw.origin)('GET', '/api/openapi.json');
      assert.equal(onPublic.status, 404);
      assert.deepEqual(onPublic.json, { error: 'Service not found' });
    } finally {
      await gw.close();
    }
  });
});

describe("real answers match the document (each call's answer is checked)", () => {
  let serviceId: string;
  let readToken: string;
  let writeToken: string;
  const serviceBody = (path: string) => ({
    name: 'Echo',
    path,
    targetUrl: upstream.origin,
    requireAuth: true,
    description: 'An echo',
    access: { groups: ['staff'], emails: ['Ann@Example.org'], emailDomains: [], subjects: [] },
  });

  it('the session endpoints', async () => {
    assert.equal((await call('GET', '/auth/profile')).status, 401);
    assert.equal((await call('GET', '/auth/csrf-token')).status, 401);
    const profile = await call('GET', '/auth/profile', { as: admin });
    assert.equal(profile.status, 200);
    assert.equal(profile.json.user.isAdmin, true);
    assert.equal((await call('GET', '/auth/profile', { as: member })).json.user.isAdmin, false);
  });

  it('the API tokens', async () => {
    const created = await call('POST', '/api/tokens', { as: admin, json: { name: 'Read', scope: 'read', expiresInDays: null } });
    assert.equal(created.status, 201, created.text);
    readToken = `Bearer ${created.json.secret}`;
    writeToken = `Bearer ${(await call('POST', '/api/tokens', { as: admin, json: { name: 'Write', scope: 'write' } })).json.secret}`;
    assert.equal((await call('GET', '/api/tokens', { as: admin })).json.length, 2);
    assert.deepEqual((await call('GET', '/api/certificates', { as: admin })).json, []);
    assert.equal((await call('POST', '/api/tokens', { as: admin, json: { name: ' ', scope: 'admin', extra: 1 } })).status, 400);
    assert.equal((await call('POST', '/api/tokens', { as: admin, json: {}, csrf: null })).status, 403);
    assert.equal((await call('GET', '/api/tokens', { authorization: writeToken })).status, 403);
    assert.equal((await call('GET', '/api/tokens', { authorization: 'Bearer ght_unknown' })).status, 401);
    assert.equal((await call('GET', '/api/tokens')).status, 401);
    assert.equal((await call('GET', '/api/tokens', { as: member })).status, 403);
    const doomed = await call('POST', '/api/tokens', { as: admin, json: { name: 'Doomed', scope: 'read', expiresInDays: 30 } });
    assert.equal((await call('DELETE', `/api/tokens/${doomed.json.id}`, { as: admin })).status, 204);
    assert.equal((await call('DELETE', `/api/tokens/${doomed.json.id}`, { as: admin })).status, 404);
  });

  it('creating a service, and every way it fails', async () => {
    const created = await call('POST', '/api/services', { as: admin, json: serviceBody('/echo') });
    assert.equal(created.status, 201, created.text);
    serviceId = created.json.id;
    const viaToken = await call('POST', '/api/services', {
      authorization: writeToken,
      json: { name: 'Open', path: '/open', targetUrl: upstream.origin, requireAuth: false },
    });
    assert.equal(viaToken.status, 201, viaToken.text);
    const failures: [number, ReturnType<typeof call>][] = [
      [400, call('POST', '/api/services', { as: admin, json: { name: 'No path' } })],
      [400, call('POST', '/api/services', { as: admin, json: { ...serviceBody('no-slash'), requireAuth: 'yes', colour: 'red' } })],
      [400, call('POST', '/api/services', { as: admin, json: [] })],
      [400, call('POST', '/api/services', { as: admin, body: '{', contentType: 'application/json' })],
      [415, call('POST', '/api/services', { as: admin, body: 'name=x', contentType: 'application/x-www-form-urlencoded' })],
      [413, call('POST', '/api/services', { as: admin, json: { name: 'x'.repeat(MAX_JSON_BODY_BYTES) } })],
      [409, call('POST', '/api/services', { as: admin, json: serviceBody('/ECHO') })],
      [403, call('POST', '/api/services', { as: admin, json: serviceBody('/csrf'), csrf: null })],
      [403, call('POST', '/api/services', { as: member, json: serviceBody('/member') })],
      [403, call('POST', '/api/services', { authorization: readToken, json: serviceBody('/read') })],
      [401, call('POST', '/api/services', { json: serviceBody('/anonymous') })],
      [401, call('POST', '/api/services', { authorization: 'Bearer ght_revoked', json: serviceBody('/bad-token') })],
    ];
    for (const [status, answer] of failures) assert.equal((await answer).status, status, (await answer).text);
  });

  it('a request body that stalls: 408', async () => {
    const answer = await new Promise<ApiResponse>((resolve, reject) => {
      const req = httpRequest(`${env.gw.origin}/api/services`, {
        method: 'POST',
        headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json', 'content-length': '100' },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text, json: JSON.parse(text) }));
      });
      req.on('error', reject);
      req.write('{"name":');
    });
    checker.check('POST', '/api/services', undefined, answer);
    assert.equal(answer.status, 408);
  });

  it('reading, changing, toggling and deleting services', async () => {
    assert.equal((await call('GET', '/api/services', { as: admin })).json.length, 2);
    assert.equal((await call('GET', '/api/services', { authorization: readToken })).status, 200);
    assert.equal((await call('GET', `/api/services/${serviceId}`, { as: admin })).status, 200);
    assert.equal((await call('GET', `/api/services/${UNKNOWN_ID}`, { as: admin })).status, 404);
    assert.equal((await call('GET', '/api/services', { as: member })).status, 403);
    assert.equal((await call('GET', '/api/services')).status, 401);
    const fetched = (await call('GET', `/api/services/${serviceId}`, { as: admin })).json;
    const updated = await call('PUT', `/api/services/${serviceId}`, { as: admin, json: { ...fetched, name: 'Echo 2', access: null, requireAuth: false } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await call('PUT', `/api/services/${serviceId}`, { as: admin, json: { path: '/OPEN' } })).status, 409);
    assert.equal((await call('PUT', `/api/services/${serviceId}`, { as: admin, json: { targetUrl: 'ftp://x' } })).status, 400);
    assert.equal((await call('PUT', `/api/services/${UNKNOWN_ID}`, { as: admin, json: {} })).status, 404);
    assert.equal((await call('PATCH', `/api/services/${serviceId}/toggle`, { as: admin, json: { enabled: false } })).status, 200);
    assert.equal((await call('PATCH', `/api/services/${serviceId}/toggle`, { authorization: writeToken, json: { enabled: true } })).status, 200);
    assert.equal((await call('PATCH', `/api/services/${serviceId}/toggle`, { as: admin, json: { enabled: 'no' } })).status, 400);
    assert.equal((await call('PATCH', `/api/services/${UNKNOWN_ID}/toggle`, { as: admin, json: { enabled: true } })).status, 404);
    const current = await call('GET', `/api/services/${serviceId}`, { as: admin });
    assert.match(String(current.headers.etag), /^"\d+"$/);
    assert.equal((await call('PUT', `/api/services/${serviceId}`, { as: admin, headers: { 'if-match': '"1"' }, json: { name: 'Stale' } })).status, 412);
    assert.equal((await call('PATCH', `/api/services/${serviceId}/toggle`, { as: admin, headers: { 'if-match': String(current.headers.etag) }, json: { enabled: true } })).status, 200);
    const pool = { targets: [{ url: upstream.origin, weight: 2 }, { url: `${upstream.origin}/b` }], loadBalancing: 'cookie', healthCheck: { path: '/up', expectStatus: 204 } };
    const doomed = await call('POST', '/api/services', { as: admin, json: { name: 'Doomed', path: '/doomed', ...pool, outlierDetection: { maxFails: 9 }, retries: 0 } });
    assert.equal(doomed.status, 201, doomed.text);
    const onePool = await call('PUT', `/api/services/${doomed.json.id}`, { authorization: writeToken, json: { targetUrl: upstream.origin, healthCheck: { expectStatus: '2xx' } } });
    assert.equal(onePool.status, 200, onePool.text);
    assert.equal((await call('PUT', `/api/services/${doomed.json.id}`, { as: admin, json: { targets: [], healthCheck: { timeoutMs: 10_000 } } })).status, 400);
    assert.equal((await call('DELETE', `/api/services/${doomed.json.id}`, { as: admin })).status, 204);
    assert.equal((await call('DELETE', `/api/services/${doomed.json.id}`, { authorization: writeToken })).status, 404);
  });

  it('the registry as a document: export, plan, apply, a bad document', async () => {
    const exported = await call('GET', '/api/services/export', { authorization: readToken });
    assert.equal(exported.status, 200);
    const plan = await call('POST', '/api/services/apply?dryRun=true', { as: admin, json: exported.json });
    assert.equal(plan.status, 200, plan.text);
    assert.deepEqual([plan.json.create, plan.json.update, plan.json.delete], [[], [], []]);
    const withNew = { ...exported.json, services: [...exported.json.services, { name: 'Declared', path: '/declared', targetUrl: upstream.origin }] };
    const applied = await call('POST', '/api/services/apply', { authorization: writeToken, json: withNew });
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.json.create.length, 1);
    assert.equal((await call('POST', '/api/services/apply', { as: admin, json: { version: 2, services: [] } })).status, 400);
    assert.equal((await call('POST', '/api/services/apply?dryRun=maybe', { as: admin, json: exported.json })).status, 400);
    assert.equal((await call('POST', '/api/services/apply', { authorization: writeToken, json: exported.json })).json.delete.length, 1);
  });

  it("a service's access log, its filters and paging", async () => {
    for (const path of ['/echo/a', '/echo/b?x=1', '/echo/c']) {
      assert.equal((await request(`${env.gw.origin}${path}`)).statusCode, 200);
    }
    await eventually('three access-log records', async () => (await apiClient(env.gw.origin)('GET', `/api/services/${serviceId}/logs`, { as: admin })).json.total === 3);
    const page = await call('GET', `/api/services/${serviceId}/logs?limit=2&offset=1`, { as: admin });
    assert.deepEqual([page.json.logs.length, page.json.total], [2, 3]);
    const filtered = await call('GET', `/api/services/${serviceId}/logs?status=2xx&method=get&path=%2Fb&user=&from=2020-01-01&to=2999-01-01T00:00:00Z`, {
      authorization: readToken,
    });
    assert.equal(filtered.json.total, 1, filtered.text);
    const wrong = await call('GET', `/api/services/${serviceId}/logs?limit=0&offset=-1&status=6xx&from=2025-02-30`, { as: admin });
    assert.deepEqual(Object.keys(wrong.json.fields).sort(), ['from', 'limit', 'offset', 'status']);
    assert.equal((await call('GET', `/api/services/${UNKNOWN_ID}/logs`, { as: admin })).status, 404);
  });

  it("a service's target health", async () => {
    const health = await call('GET', `/api/services/${serviceId}/health`, { authorization: readToken });
    assert.equal(health.status, 200, health.text);
    assert.equal(health.json.targets[0].url, upstream.origin);
    assert.equal((await call('GET', `/api/services/${UNKNOWN_ID}/health`, { as: admin })).status, 404);
    assert.equal((await call('GET', `/api/services/${serviceId}/health`, { as: member })).status, 403);
  });

  it("a service's explanation: who can reach a path", async () => {
    const explained = await call('POST', `/api/services/${serviceId}/explain`, { authorization: writeToken, json: { path: '/x/y', method: 'get', user: { sub: 'someone', groups: ['g'] } } });
    assert.equal(explained.status, 200, explained.text);
    assert.equal((await call('POST', `/api/services/${serviceId}/explain`, { as: admin, json: { path: 'x' } })).status, 400);
    assert.equal((await call('POST', `/api/services/${UNKNOWN_ID}/explain`, { as: admin, json: { path: '/' } })).status, 404);
  });

  it('the dashboard: statistics, the audit log, traffic', async () => {
    const stats = await call('GET', '/dashboard/stats', { authorization: readToken });
    assert.equal(stats.json.totalServices, 2);
    const audit = await call('GET', '/dashboard/logs?limit=5', { as: admin });
    assert.equal(audit.json.logs.length, 5);
    assert.equal((await call('GET', '/dashboard/logs?limit=1001', { as: admin })).status, 400);
    assert.equal((await call('GET', '/dashboard/stats', { as: member })).status, 403);
    const traffic = await call('GET', `/dashboard/traffic?range=1d&serviceId=${serviceId}`, { as: admin });
    assert.equal(traffic.json.points.length, 288);
    assert.equal((await call('GET', '/dashboard/traffic', { authorization: readToken })).json.points.length, 60);
    assert.equal((await call('GET', '/dashboard/traffic?range=1w&serviceId=x', { as: admin })).status, 400);
    assert.equal((await call('GET', `/dashboard/traffic?serviceId=${UNKNOWN_ID}`, { as: admin })).status, 404);
  });

  it('rotating the assertion key', async () => {
    const rotated = await call('POST', '/api/assertion-keys/rotate', { as: admin });
    assert.equal(rotated.status, 200);
    assert.equal((await call('POST', '/api/assertion-keys/rotate', { authorization: writeToken })).json.previousKid, rotated.json.kid);
    assert.equal((await call('POST', '/api/assertion-keys/rotate', { authorization: readToken })).status, 403);
  });

  it('the sessions: listed, found by user, one ended, a user signed out everywhere', async () => {
    const everyone = await call('GET', '/api/sessions', { authorization: readToken });
    assert.equal(everyone.status, 200, everyone.text);
    assert.ok(everyone.json.total >= 2);
    const second = await signInThroughProvider('user@example.com');
    const members = await call('GET', '/api/sessions?user=USER@example.com&limit=1', { as: admin });
    assert.deepEqual([members.json.sessions.length, members.json.total], [1, 2]);
    assert.equal(members.json.sessions[0].user.sub, 'demo-user');
    assert.ok(!JSON.stringify(members.json).includes(second.cookie.split('=')[1]!), 'no session id in the list');
    assert.equal((await call('GET', '/api/sessions?limit=0&user=', { as: admin })).status, 400);
    assert.equal((await call('GET', '/api/sessions', { as: member })).status, 403);
    assert.equal((await call('DELETE', `/api/sessions/${members.json.sessions[0].id}`, { authorization: readToken })).status, 403);
    assert.equal((await call('DELETE', `/api/sessions/${members.json.sessions[0].id}`, { as: admin })).status, 204);
    assert.equal((await call('DELETE', `/api/sessions/${members.json.sessions[0].id}`, { as: admin })).status, 404);
    assert.equal((await call('GET', '/api/sessions?user=demo-user', { as: admin })).json.total, 1);
    const everywhere = await call('DELETE', '/api/users/demo-user/sessions', { authorization: writeToken });
    assert.deepEqual(everywhere.json, { revoked: 1 });
    assert.equal((await call('GET', '/auth/profile', { as: member })).status, 401);
    assert.equal((await call('GET', '/auth/profile', { as: second })).status, 401);
    assert.deepEqual((await call('DELETE', '/api/users/nobody%7C1/sessions', { as: admin })).json, { revoked: 0 });
    // An administrator's sessions: not with a write token (design.md §4.8), with a `write sessions` one.
    const adminSub = encodeURIComponent((await call('GET', '/auth/profile', { as: admin })).json.user.sub);
    const refused = await call('DELETE', `/api/users/${adminSub}/sessions`, { authorization: writeToken });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.headers['www-authenticate'], 'Bearer error="insufficient_scope", scope="sessions"');
    const sessionsToken = await call('POST', '/api/tokens', { as: admin, json: { name: 'Sessions', scope: 'write sessions' } });
    assert.equal(sessionsToken.json.scope, 'write sessions');
    assert.deepEqual((await call('DELETE', '/api/users/nobody%7C1/sessions', { authorization: `Bearer ${sessionsToken.json.secret}` })).json, { revoked: 0 });
    member = await signInThroughProvider('user@example.com');
  });

  it('the rate limit: 429 with Retry-After and RateLimit-*', async () => {
    const limited = await startTestGateway({ RATE_LIMIT_GENERAL: '1/15m' });
    try {
      const limitedCall = checkedApiClient(limited.adminUrl, checker);
      assert.equal((await limitedCall('GET', '/api/services')).status, 401);
      assert.equal((await limitedCall('GET', '/api/services')).status, 429);
    } finally {
      await limited.close();
    }
  });

  it('every operation of the document was seen answering its success', () => {
    const missing = checker.successes().filter((success) => !checker.seen.has(success));
    assert.deepEqual(missing, []);
  });
});
