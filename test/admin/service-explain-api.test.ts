/**
 * `POST /api/services/:id/explain` (design.md §4.18) at its edges: the 400s naming each bad field,
 * the 404 of an unknown service, the guards of the service endpoints beside it (session and CSRF
 * token, admin rights, a write token), nothing audited; and the service page's "Who can reach
 * this?" form answered by the server, without JavaScript.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import type { SignedIn } from '../support/sessions.js';
import { service as sample } from '../support/samples.js';
import { parseExplainBody } from '../../admin/explain/explain-input.js';
import { explainService } from '../../admin/explain/service-explanation.js';

let serviceId = '';
let member: SignedIn;

const env = useAdminSession({ upstream: true }, async (env) => {
  member = await env.signIn({ sub: 'member-sub', email: 'max@example.com', isAdmin: false });
  serviceId = await env.createService({
    name: 'Hooked <app>',
    path: '/hooked',
    targetUrl: env.upstream.origin,
    requireAuth: true,
    corsPreflight: 'public',
    rules: [
      { paths: ['/internal'], action: 'deny' },
      { paths: ['/admin'], action: 'require', access: { groups: ['admins'], emails: [], emailDomains: [], subjects: [] } },
    ],
  });
});

const explainPath = () => `/api/services/${serviceId}/explain`;

/** The `fields` of the 400 that `body` gets. */
async function refused(body: unknown): Promise<Record<string, string>> {
  const response = await env.call('POST', explainPath(), { as: env.admin, json: body });
  assert.equal(response.status, 400, response.text);
  assert.match(response.json.error, /Invalid question|Body must be a JSON object/);
  return response.json.fields;
}

describe('POST /api/services/:id/explain: what it refuses', () => {
  it('400 naming every bad field at once, and each unknown one', async () => {
    assert.deepEqual(await refused({}), { path: 'is required' });
    assert.deepEqual(await refused({ path: 'hooked/x', method: 'G ET', user: { groups: 'admins' }, corsPreflight: 'yes', extra: 1 }), {
      path: 'must start with /',
      method: 'must be an HTTP method (GET, POST, …)',
      'user.groups': 'must be a list of group names',
      corsPreflight: 'must be true or false',
      extra: 'unknown field',
    });
    assert.deepEqual(await refused({ path: '/hooked', user: { name: 'x' } }), { 'user.name': 'unknown field' });
    assert.equal(await refused([]), undefined, 'an array is no object: the message says so, no fields');
  });

  it('400 for a path the data plane itself refuses (dot segments, NUL, malformed escapes, #), said as such', async () => {
    for (const path of ['/hooked/../admin', '/hooked/%2e%2e/admin', '/hooked/%zz', '/hooked/a%00', '/hooked#x', '/hooked/..;/admin']) {
      const fields = await refused({ path });
      assert.match(fields.path!, /refused by the gateway before routing \(400\)/, path);
    }
    assert.match((await refused({ path: `/${'a'.repeat(2048)}` })).path!, /at most 2048 characters/);
  });

  it('400 for a preflight that is not OPTIONS, and for a host that is no host name', async () => {
    assert.deepEqual(await refused({ path: '/hooked', method: 'GET', corsPreflight: true }), { corsPreflight: 'is only for method OPTIONS' });
    assert.deepEqual(await refused({ path: '/hooked', host: 'app.example.com:8443' }), { host: 'must not carry a port' });
  });

  it('404 for an unknown service, a malformed id too', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const response = await env.call('POST', `/api/services/${id}/explain`, { as: env.admin, json: { path: '/hooked' } });
      assert.equal(response.status, 404);
      assert.equal(response.json.error, 'Service not found');
    }
  });
});

describe('POST /api/services/:id/explain: who may ask', () => {
  const question = { path: '/hooked/internal' };

  it('an admin session needs its CSRF token; a member is refused; nobody gets 401', async () => {
    const withoutCsrf = await env.call('POST', explainPath(), { as: env.admin, csrf: null, json: question });
    assert.deepEqual([withoutCsrf.status, withoutCsrf.json.error], [403, 'Invalid CSRF token']);
    const wrongCsrf = await env.call('POST', explainPath(), { as: env.admin, csrf: 'x'.repeat(43), json: question });
    assert.equal(wrongCsrf.status, 403);
    const asMember = await env.call('POST', explainPath(), { as: member, json: question });
    assert.deepEqual([asMember.status, asMember.json.error], [403, 'Admin access required']);
    const anonymous = await env.call('POST', explainPath(), { json: question });
    assert.equal(anonymous.status, 401);
    assert.equal((await env.call('POST', explainPath(), { as: env.admin, json: question })).json.outcome, 'deny');
  });

  it('an API token: write answers (no CSRF token needed), read is refused as for every POST; nothing is audited', async () => {
    const token = async (scope: string) => `Bearer ${(await env.call('POST', '/api/tokens', { as: env.admin, json: { name: `explain ${scope}`, scope } })).json.secret}`;
    const auditBefore = (await env.call('GET', '/dashboard/logs?limit=1000', { as: env.admin })).json.total;
    const write = await env.call('POST', explainPath(), { authorization: await token('write'), json: question });
    assert.deepEqual([write.status, write.json.outcome, write.json.rule.index], [200, 'deny', 0]);
    const read = await env.call('POST', explainPath(), { authorization: await token('read'), json: question });
    assert.deepEqual([read.status, read.json.error], [403, 'Insufficient scope']);
    const invalid = await env.call('POST', explainPath(), { authorization: 'Bearer ght_not-a-token', json: question });
    assert.equal(invalid.status, 401);
    const auditAfter = (await env.call('GET', '/dashboard/logs?limit=1000', { as: env.admin })).json.total;
    assert.equal(auditAfter, auditBefore + 2, 'only the two tokens made are audited, no explanation');
  });
});

describe("the service page's \"Who can reach this?\" without JavaScript", () => {
  const page = async (query: string) => {
    const response = await env.call('GET', `/dashboard/services/${serviceId}?${query}`, { as: env.admin, headers: { accept: 'text/html' } });
    assert.equal(response.status, 200);
    return response.text;
  };

  it('the form is a GET of the page itself; without a question there is no answer', async () => {
    const html = await page('');
    assert.match(html, /<form class="filters" method="get" action="\/dashboard\/services\/[0-9a-f-]{36}#who-can-reach" data-explain-form>/);
    assert.match(html, /<h2 id="explain-heading">Who can reach this\?<\/h2>/);
    assert.match(html, /name="who-preflight"/, 'a service with public preflights offers the preflight checkbox');
    assert.doesNotMatch(html, /data-explanation/);
  });

  it('a question in the query is answered on the page: the deciding rule, the sentence, the fields kept', async () => {
    const html = await page('who-path=%2Fhooked%2FADMIN%2Fx&who-method=get&who-sub=ann&who-groups=staff%2C+admins');
    assert.match(html, /data-outcome="allowed"/);
    assert.match(html, /Deciding rule: <code data-deciding-rule>require groups=admins \/admin<\/code> \(rule 2\)/);
    assert.match(html, /<p data-reason>Rule 2 \(require groups=admins \/admin\) matches and lets this caller in: one of their groups is on the access list\.<\/p>/);
    assert.match(html, /Routing key: <code>\/hooked\/admin\/x<\/code>/);
    assert.match(html, /id="who-groups" name="who-groups" value="staff, admins"/);
    const anonymous = await page('who-path=%2Fhooked%2Fadmin');
    assert.match(anonymous, /data-outcome="sign-in required"/);
  });

  it('a wrong question shows the reason where the answer would be, the page still there', async () => {
    const html = await page('who-path=%2Fhooked%2F..%2Fadmin');
    assert.match(html, /<p class="notice error" role="alert">Invalid question: path is refused by the gateway before routing/);
    assert.match(html, /Hooked &lt;app&gt;/);
  });
});

describe('the sentence names step-up (maxAge, acr) where the gateway will check it', () => {
  it("a require rule's own step-up, else the service's for requests no rule decides; none where no sign-in is needed", () => {
    const stepUp = { maxAge: 300, acr: ['mfa', 'hwk'] };
    const app = sample({
      path: '/app',
      targetUrl: 'http://127.0.0.1:9',
      requireAuth: true,
      maxAge: 0,
      rules: [{ paths: ['/admin'], action: 'require', access: null, ...stepUp }, { paths: ['/hooks'], action: 'public' }],
    } as Parameters<typeof sample>[0]);
    const ask = (path: string, user?: { sub: string }) => explainService(app, [app], parseExplainBody({ path, user: user ?? null })).reason;
    assert.match(ask('/app/admin', { sub: 'a' }), /lets this caller in: any signed-in caller passes; step-up: a sign-in at most 300 seconds old with an acr of mfa or hwk, else the browser signs in again\.$/);
    assert.match(ask('/app/admin'), /then any signed-in caller passes; step-up: a sign-in at most 300 seconds old with an acr of mfa or hwk/);
    assert.match(ask('/app/other', { sub: 'a' }), /step-up: a fresh sign-in \(maxAge 0\), else the browser signs in again\.$/);
    assert.doesNotMatch(ask('/app/hooks'), /step-up/);
  });
});
