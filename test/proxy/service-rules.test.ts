/**
 * design.md §4.18 in the data plane: rules inside a service. A webhook path public inside a
 * protected service, a `deny` path closed to everyone, a `require` rule with its own access
 * policy, methods, the first match winning, CORS preflights; and every spelling of a rule's path
 * (the routing key's readings, as path-spellings.test.ts tries them against prefixes) meeting the
 * same rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccessPolicy, Service } from '../../shared/types.js';
import { compileServiceRules, NO_RULE } from '../../shared/services/service-rules.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { rawRequest, type RawResponse } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { headerValues, startEchoUpstream, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const policy = (lists: Partial<AccessPolicy>): AccessPolicy => ({ groups: [], emails: [], emailDomains: [], subjects: [], ...lists });

/** `method target` sent byte for byte over TCP (fetch clients would normalise `\` and `..`). */
function raw(port: number, method: string, target: string, headers: Record<string, string> = {}, body = ''): Promise<RawResponse> {
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  return rawRequest(port, `${method} ${target} HTTP/1.1\r\nHost: gatehouse.test\r\n${lines}Connection: close\r\n\r\n${body}`);
}

describe('rules inside a service', () => {
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;
  let app: Service;

  before(async () => {
    upstream = await startEchoUpstream();
    app = service({
      path: '/app',
      targetUrl: upstream.origin,
      requireAuth: true,
      access: policy({ groups: ['staff'] }),
      corsPreflight: 'public',
      rules: [
        { paths: ['/hooks/internal'], action: 'deny' },
        { paths: ['/hooks/*'], methods: ['POST'], action: 'public' },
        { paths: ['/health', '/static'], methods: ['GET'], action: 'public' },
        { paths: ['/admin'], action: 'require', access: policy({ groups: ['admins'] }) },
        { paths: ['/api/*/admin', '/internal'], action: 'deny' },
        { paths: ['/team'], action: 'require', access: null },
      ],
    });
    gateway = await startDataPlane({
      services: [
        app,
        service({ path: '/plain', targetUrl: upstream.origin, requireAuth: true }),
        service({ path: '/open', targetUrl: upstream.origin, rules: [{ paths: ['/private'], action: 'require', access: null }] }),
      ],
    });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const reached = (before: number): boolean => upstream.requests.length > before;

  it('a webhook path is public inside a protected service: no session, 200 at the target; the rest still needs sign-in', async () => {
    const before = upstream.requests.length;
    const hook = await raw(gateway.port, 'POST', '/app/hooks/github', { 'Content-Length': '0' });
    assert.equal(hook.status, 200);
    assert.equal(upstream.requests.at(-1)!.url, '/hooks/github');
    assert.deepEqual(headerValues(upstream.requests.at(-1)!, 'x-forwarded-user'), []);
    assert.equal(upstream.requests.length, before + 1);
    assert.equal((await raw(gateway.port, 'GET', '/app/other')).status, 401);
    assert.equal((await raw(gateway.port, 'POST', '/app/hooks', { 'Content-Length': '0' })).status, 401, '/hooks/* needs a segment after /hooks');
    assert.equal((await raw(gateway.port, 'POST', '/app/hooksx/a', { 'Content-Length': '0' })).status, 401, 'whole segments only');
  });

  it('with a session, a public path still sends the identity headers, even for a user the service policy refuses', async () => {
    const cookie = await gateway.signIn({ sub: 'outsider', groups: [] });
    const response = await raw(gateway.port, 'POST', '/app/hooks/github', { Cookie: cookie, 'Content-Length': '0' });
    assert.equal(response.status, 200);
    const received = upstream.requests.at(-1)!;
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), ['outsider']);
    assert.equal(headerValues(received, 'x-gatehouse-assertion').length, 1);
    assert.equal((await raw(gateway.port, 'GET', '/app/other', { Cookie: cookie })).status, 403, 'elsewhere the service policy holds');
  });

  it('methods: GET covers HEAD; another method falls through to the service (401)', async () => {
    assert.equal((await raw(gateway.port, 'GET', '/app/health')).status, 200);
    assert.equal((await raw(gateway.port, 'HEAD', '/app/static/app.js')).status, 200);
    assert.equal((await raw(gateway.port, 'POST', '/app/health', { 'Content-Length': '0' })).status, 401);
    assert.equal((await raw(gateway.port, 'GET', '/app/hooks/github')).status, 401, 'the webhook rule is for POST only');
  });

  it('the first match wins: /hooks/internal is denied before /hooks/* makes it public', async () => {
    const before = upstream.requests.length;
    const denied = await raw(gateway.port, 'POST', '/app/hooks/internal', { 'Content-Length': '0' });
    assert.equal(denied.status, 403);
    assert.deepEqual(JSON.parse(denied.body), { error: 'Access denied' });
    assert.equal(reached(before), false);
  });

  it('deny: 403 Access denied for everyone, signed in or not, admin group or not; access-logged as a 403', async () => {
    const cookie = await gateway.signIn({ sub: 'boss', groups: ['staff', 'admins'] });
    const before = upstream.requests.length;
    for (const target of ['/app/internal', '/app/internal/x', '/app/api/v1/admin', '/app/api/v2/admin/users']) {
      assert.equal((await raw(gateway.port, 'GET', target)).status, 403, target);
      assert.equal((await raw(gateway.port, 'GET', target, { Cookie: cookie })).status, 403, target);
    }
    assert.equal(reached(before), false);
    assert.equal((await raw(gateway.port, 'GET', '/app/api/v1/users', { Cookie: cookie })).status, 200, '* is one segment, the rest must follow');
    const record = await gateway.waitForRecord((r) => r.path === '/app/api/v2/admin/users' && r.userId === 'boss');
    assert.equal(record.statusCode, 403);
    const page = await raw(gateway.port, 'GET', '/app/internal', { Accept: 'text/html' });
    assert.equal(page.status, 403);
    assert.match(page.body, /Access denied/);
  });

  it('require with its own policy overrides the service policy for its paths', async () => {
    const staff = await gateway.signIn({ sub: 'staffer', groups: ['staff'] });
    const admin = await gateway.signIn({ sub: 'admin', groups: ['admins'] });
    assert.equal((await raw(gateway.port, 'GET', '/app/admin/x', { Cookie: staff })).status, 403);
    assert.equal((await raw(gateway.port, 'GET', '/app/admin/x', { Cookie: admin })).status, 200);
    assert.equal((await raw(gateway.port, 'GET', '/app/other', { Cookie: admin })).status, 403, 'not staff: refused elsewhere');
    assert.equal((await raw(gateway.port, 'GET', '/app/admin/x')).status, 401);
    const anyone = await gateway.signIn({ sub: 'anyone', groups: [] });
    assert.equal((await raw(gateway.port, 'GET', '/app/team', { Cookie: anyone })).status, 200, 'require with access null: any signed-in caller');
  });

  it('require inside a public service: its paths need sign-in, the rest stays open', async () => {
    assert.equal((await raw(gateway.port, 'GET', '/open/x')).status, 200);
    for (const target of ['/open/private', '/open/PRIVATE/x', '/open/%70rivate', '/open//private', '/open/private;x=1']) {
      assert.equal((await raw(gateway.port, 'GET', target)).status, 401, target);
    }
    const cookie = await gateway.signIn();
    assert.equal((await raw(gateway.port, 'GET', '/open/private', { Cookie: cookie })).status, 200);
  });

  // The routing key's readings (routing-key.ts), as path-spellings.test.ts tries them on prefixes.
  const denySpellings = [
    '/app/INTERNAL',
    '/app/Internal/x',
    '/app/%69nternal',
    '/app/%49NTERNAL',
    '/app//internal',
    '/app/internal;jsessionid=1',
    '/app/;x/internal',
    '/app\\internal',
    '/app%2Finternal',
    '/app%2finternal',
    '/app%5Cinternal',
    '/APP/internal',
    '/app/api/V1/%41dmin',
    '/app/api//v1//admin',
    '/app/api%2Fv1%2Fadmin',
    '/app/hooks/%69nternal',
  ];
  it('every spelling of a deny path is denied, signed in or not, and never reaches the target', async () => {
    const cookie = await gateway.signIn({ sub: 'boss', groups: ['staff', 'admins'] });
    const before = upstream.requests.length;
    for (const target of denySpellings) {
      const method = target.startsWith('/app/hooks') ? 'POST' : 'GET';
      const headers = { 'Content-Length': '0' };
      assert.equal((await raw(gateway.port, method, target, headers)).status, 403, target);
      assert.equal((await raw(gateway.port, method, target, { ...headers, Cookie: cookie })).status, 403, target);
    }
    assert.equal(reached(before), false);
  });

  it('dot segments that would climb from a public path into another are refused (400), never made public', async () => {
    const before = upstream.requests.length;
    for (const target of ['/app/health/../admin', '/app/health/%2e%2e/admin', '/app/health%2F..%2Fadmin', '/app/health\\..\\admin', '/app/health/./x', '/app/health/..;/admin']) {
      assert.equal((await raw(gateway.port, 'GET', target)).status, 400, target);
    }
    assert.equal(reached(before), false);
  });

  it('every spelling of a public path is public; a spelling is never public for a path outside the rule', async () => {
    for (const target of ['/app/HEALTH', '/app/%68ealth', '/app//health', '/app/health;v=1', '/app\\health', '/app%2Fhealth', '/APP/Health/x']) {
      assert.equal((await raw(gateway.port, 'GET', target)).status, 200, target);
    }
    for (const target of ['/app/healthz', '/app/%68ealthz', '/app/heal%74h2', '/app/x/health', '/app/static2/a']) {
      assert.equal((await raw(gateway.port, 'GET', target)).status, 401, target);
    }
  });

  it('the compiled rules: a method in any case meets the rule written in capitals; GET covers HEAD; a root service matches from its start', () => {
    const rules = compileServiceRules(service({ path: '/', targetUrl: 'http://t', rules: [{ paths: ['/x/*'], methods: ['DELETE', 'GET'], action: 'deny' }] }))!;
    assert.equal(rules.decide('delete', '/x/a', 0, false), 0);
    assert.equal(rules.decide('HEAD', '/x/a/b', 0, false), 0);
    assert.equal(rules.guards[0]!.deny, true);
    assert.equal(rules.decide('POST', '/x/a', 0, false), NO_RULE);
    assert.equal(rules.decide('GET', '/x/', 0, false), NO_RULE, '* never matches the empty segment of a trailing /');
    assert.equal(compileServiceRules(service({ path: '/', targetUrl: 'http://t' })), undefined, 'no rules, no preflight setting: nothing to check');
  });

  it('the compiled rules match whole segments from the end of the prefix, * one non-empty segment, / everything', () => {
    const rules = compileServiceRules(
      service({
        path: '/app',
        targetUrl: 'http://t',
        rules: [
          { paths: ['/a/*/c'], action: 'deny' },
          { paths: ['/abc', '/ab/d'], action: 'public' },
          { paths: ['/'], methods: ['PUT'], action: 'deny' },
        ],
      }),
    )!;
    const from = '/app'.length;
    const cases: [string, string, number][] = [
      ['GET', '/app/a/b/c', 0],
      ['GET', '/app/a/b/c/d/e', 0],
      ['GET', '/app/a/b/cd', NO_RULE],
      ['GET', '/app/a//c', NO_RULE], // not a routing key, but * never takes an empty segment
      ['GET', '/app/a/b', NO_RULE],
      ['GET', '/app/abc', 1],
      ['GET', '/app/abd', NO_RULE],
      ['GET', '/app/abc/x', 1],
      ['GET', '/app/ab/d', 1],
      ['GET', '/app/ab/e', NO_RULE],
      ['GET', '/app', NO_RULE],
      ['PUT', '/app', 2],
      ['PUT', '/app/zzz/y', 2],
      ['put', '/app/a/b/c', 0],
    ];
    for (const [method, key, expected] of cases) assert.equal(rules.decide(method, key, from, false), expected, `${method} ${key}`);
  });

  it('CORS preflight: through without a session only with corsPreflight public, only for a real preflight', async () => {
    const preflight = { Origin: 'https://ui.example', 'Access-Control-Request-Method': 'PUT' };
    const before = upstream.requests.length;
    const passed = await raw(gateway.port, 'OPTIONS', '/app/other', preflight);
    assert.equal(passed.status, 200);
    assert.equal(upstream.requests.at(-1)!.method, 'OPTIONS');
    assert.equal(upstream.requests.length, before + 1);
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/admin', preflight)).status, 200, 'before a require rule too');
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/internal', preflight)).status, 403, 'a deny rule still wins');
    assert.equal((await raw(gateway.port, 'OPTIONS', '/plain/x', preflight)).status, 401, 'not without corsPreflight public');
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/other')).status, 401, 'a bare OPTIONS is no preflight');
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/other', { Origin: 'https://ui.example' })).status, 401);
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/other', { 'Access-Control-Request-Method': 'PUT' })).status, 401, 'no Origin');
    assert.equal((await raw(gateway.port, 'OPTIONS', '/app/other', { ...preflight, 'Content-Length': '2' }, 'ab')).status, 401, 'a body: no preflight');
    assert.equal((await raw(gateway.port, 'GET', '/app/other', preflight)).status, 401, 'only OPTIONS');
  });
});

describe('rules inside a service, over HTTP/2 (H2C)', () => {
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startEchoUpstream();
    const rules = [
      { paths: ['/files'], methods: ['DELETE'], action: 'deny' as const },
      { paths: ['/hooks'], methods: ['POST'], action: 'public' as const },
    ];
    gateway = await startDataPlane({ env: { H2C: 'true' }, services: [service({ path: '/app', targetUrl: upstream.origin, requireAuth: true, rules })] });
  });
  after(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('a method in any case meets the rule written in capitals: a lower-case DELETE is denied, never forwarded', async () => {
    const session = await openSession(gateway.origin);
    try {
      const cookie = await gateway.signIn();
      const before = upstream.requests.length;
      for (const method of ['DELETE', 'delete', 'Delete']) {
        const response = await http2Request(session, { ':method': method, ':path': '/app/FILES/x', cookie });
        assert.equal(response.status, 403, method);
      }
      assert.equal(upstream.requests.length, before);
      // The public rule matches too: no 401 (the echo target, node:http, answers a lower-case method 400 itself).
      assert.notEqual((await http2Request(session, { ':method': 'post', ':path': '/app/hooks' })).status, 401);
      assert.equal((await http2Request(session, { ':method': 'post', ':path': '/app/other' })).status, 401);
    } finally {
      session.close();
    }
  });
});
