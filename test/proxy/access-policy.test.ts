/**
 * design.md §4.7 in the data plane: a service's access policy lets a signed-in caller through when
 * any entry matches (subject exactly, verified email or its domain case-insensitively, group
 * exactly) and otherwise answers 403 `Access denied`, access-logged with the user.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AccessPolicy, Service, SessionUser } from '../../shared/types.js';
import { service } from '../support/samples.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

/** A policy with only the lists given. */
const policy = (lists: Partial<AccessPolicy>): AccessPolicy => ({ groups: [], emails: [], emailDomains: [], subjects: [], ...lists });

describe('access policies in the data plane', () => {
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;
  let services: Record<string, Service>;

  /** The status of GET `<path>/x` for a caller signed in as `user`. */
  async function statusAs(path: string, user: Partial<SessionUser>): Promise<number> {
    const cookie = await gateway.signIn(user);
    return (await gateway.fetch(`${path}/x`, { headers: { cookie } })).status;
  }

  before(async () => {
    upstream = await startEchoUpstream();
    const target = upstream.origin;
    services = {
      groups: service({ path: '/by-group', targetUrl: target, requireAuth: true, access: policy({ groups: ['ops', 'Team Blue'] }) }),
      emails: service({ path: '/by-email', targetUrl: target, requireAuth: true, access: policy({ emails: ['ann@example.com'] }) }),
      domains: service({ path: '/by-domain', targetUrl: target, requireAuth: true, access: policy({ emailDomains: ['example.org'] }) }),
      subjects: service({ path: '/by-subject', targetUrl: target, requireAuth: true, access: policy({ subjects: ['sub-allowed'] }) }),
      any: service({ path: '/any-signed-in', targetUrl: target, requireAuth: true, access: null }),
      emptyLists: service({ path: '/empty-lists', targetUrl: target, requireAuth: true, access: policy({}) }),
      named: service({ path: '/named', name: 'Payroll <internal>', targetUrl: target, requireAuth: true, access: policy({ groups: ['payroll'] }) }),
      disabled: service({ path: '/disabled', targetUrl: target, requireAuth: true, enabled: false, access: policy({ groups: ['ops'] }) }),
    };
    gateway = await startDataPlane({ services: Object.values(services) });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('by group: a caller in a listed group passes, matched exactly; others and callers without groups get 403', async () => {
    assert.equal(await statusAs('/by-group', { groups: ['dev', 'ops'] }), 200);
    assert.equal(await statusAs('/by-group', { groups: ['Team Blue'] }), 200);
    assert.equal(await statusAs('/by-group', { groups: ['Ops', 'team blue', 'ops '] }), 403);
    assert.equal(await statusAs('/by-group', { groups: [] }), 403);
    assert.equal(await statusAs('/by-group', {}), 403, 'a session made before groups were kept has none');
  });

  it('by email: the verified email in any case; an unverified one (kept as empty) never matches', async () => {
    assert.equal(await statusAs('/by-email', { email: 'ann@example.com' }), 200);
    assert.equal(await statusAs('/by-email', { email: 'Ann@EXAMPLE.com' }), 200);
    assert.equal(await statusAs('/by-email', { email: 'anne@example.com' }), 403);
    assert.equal(await statusAs('/by-email', { email: '', name: 'ann@example.com', sub: 'ann@example.com' }), 403);
  });

  it('by domain: the part after the last @ in any case, never a subdomain or a look-alike', async () => {
    assert.equal(await statusAs('/by-domain', { email: 'bob@example.org' }), 200);
    assert.equal(await statusAs('/by-domain', { email: 'Bob@Example.ORG' }), 200);
    assert.equal(await statusAs('/by-domain', { email: '"a@evil.test"@example.org' }), 200);
    assert.equal(await statusAs('/by-domain', { email: 'bob@eu.example.org' }), 403);
    assert.equal(await statusAs('/by-domain', { email: 'bob@example.org.evil.test' }), 403);
    assert.equal(await statusAs('/by-domain', { email: 'bob@notexample.org' }), 403);
    assert.equal(await statusAs('/by-domain', { email: 'example.org@evil.test' }), 403);
    assert.equal(await statusAs('/by-domain', { email: '' }), 403);
  });

  it('by subject: exactly', async () => {
    assert.equal(await statusAs('/by-subject', { sub: 'sub-allowed' }), 200);
    assert.equal(await statusAs('/by-subject', { sub: 'SUB-ALLOWED' }), 403);
    assert.equal(await statusAs('/by-subject', { sub: 'sub-allowed-2' }), 403);
  });

  it('without a policy, or with every list empty, any signed-in caller passes', async () => {
    assert.equal(await statusAs('/any-signed-in', { groups: [] }), 200);
    assert.equal(await statusAs('/empty-lists', { groups: [] }), 200);
  });

  it('answers 403 {"error":"Access denied"} as JSON, forwards nothing, and access-logs the 403 with the user', async () => {
    const before = upstream.requests.length;
    const cookie = await gateway.signIn({ sub: 'refused-sub', groups: ['dev'] });
    const response = await gateway.fetch('/by-group/refused?x=1', { headers: { cookie, accept: 'application/json' } });
    assert.equal(response.status, 403);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.deepEqual(response.json(), { error: 'Access denied' });
    assert.equal(upstream.requests.length, before);
    const record = await gateway.waitForRecord((entry) => entry.path === '/by-group/refused?x=1');
    assert.equal(record.statusCode, 403);
    assert.equal(record.userId, 'refused-sub');
    assert.equal(record.serviceId, services.groups!.id);
  });

  it('answers a browser with a 403 page naming the service and the account, with a sign-out link', async () => {
    const cookie = await gateway.signIn({ sub: 'sub-9', name: 'Bob', email: 'bob@example.com', groups: ['dev'] });
    const response = await gateway.fetch('/named/x', { headers: { cookie, accept: BROWSER_ACCEPT } });
    assert.equal(response.status, 403);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.text, /<title>Access denied · Gatehouse<\/title>/);
    assert.match(response.text, /<strong id="service">Payroll &lt;internal&gt;<\/strong>/);
    assert.match(response.text, /<strong id="account">bob@example\.com<\/strong>/);
    assert.match(response.text, /<a class="button" id="logout" href="\/auth\/logout">Sign out<\/a>/);
  });

  it('names the account by its name without a verified email, else by its subject', async () => {
    const named = await gateway.signIn({ sub: 'sub-10', name: 'Carol', email: '' });
    assert.match((await gateway.fetch('/named/x', { headers: { cookie: named, accept: BROWSER_ACCEPT } })).text, /id="account">Carol</);
    const bare = await gateway.signIn({ sub: 'sub-11', name: '', email: '' });
    assert.match((await gateway.fetch('/named/x', { headers: { cookie: bare, accept: BROWSER_ACCEPT } })).text, /id="account">sub-11</);
  });

  it('comes after the other answers: 401 without a session, 503 for a disabled service', async () => {
    assert.equal((await gateway.fetch('/by-group/x')).status, 401);
    assert.equal(await statusAs('/disabled', { groups: ['dev'] }), 503);
  });

  it('passes identity on to the target for an allowed caller', async () => {
    const cookie = await gateway.signIn({ sub: 'sub-ops', email: 'ops@example.com', groups: ['ops'] });
    const echoed = (await gateway.fetch('/by-group/x', { headers: { cookie } })).json<Echo>();
    assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), ['sub-ops']);
  });

  it('follows the registry: a new snapshot changes who may pass', async () => {
    const cookie = await gateway.signIn({ groups: ['dev'] });
    assert.equal((await gateway.fetch('/by-group/x', { headers: { cookie } })).status, 403);
    await gateway.publish(Object.values({ ...services, groups: { ...services.groups!, access: policy({ groups: ['dev'] }) } }));
    assert.equal((await gateway.fetch('/by-group/x', { headers: { cookie } })).status, 200);
    await gateway.publish(Object.values({ ...services, groups: { ...services.groups!, access: null } }));
    assert.equal(await statusAs('/by-group', { groups: [] }), 200);
    await gateway.publish(Object.values(services));
    assert.equal((await gateway.fetch('/by-group/x', { headers: { cookie } })).status, 403);
  });
});
