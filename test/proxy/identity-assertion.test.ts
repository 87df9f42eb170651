/**
 * The identity assertion in the data plane (design.md §4.7): `X-Gatehouse-Assertion` on every
 * forwarded request with a caller, its claims, its cache, `/.well-known/jwks.json`, and what the
 * data plane does before it has any key. Verified with jose against the gateway's own JWKS; a
 * real upstream process verifying it is test/assertion/upstream-verification.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { IdentityAssertions } from '../../proxy/auth/identity-assertion.js';
import { RouteTable, type Route } from '../../proxy/routing/route-table.js';
import type { Service, SessionUser } from '../../shared/types.js';
import { sampleAssertionKeySet, service } from '../support/samples.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const PUBLIC_URL = 'http://gateway.example';
const ADMIN = { userId: 'admin-sub', ipAddress: '127.0.0.1' };

let upstream: EchoUpstream;
let services: Service[];

before(async () => {
  upstream = await startEchoUpstream();
  services = [
    service({ path: '/private', targetUrl: upstream.origin, requireAuth: true }),
    service({ path: '/other', targetUrl: upstream.origin, requireAuth: true }),
    service({ path: '/app', targetUrl: upstream.origin }),
    service({ path: '/', targetUrl: upstream.origin }),
  ];
});
after(() => upstream.close());

/** The gateway's published key set, as a verifier fetches it. */
async function jwks(gateway: TestDataPlane): Promise<JSONWebKeySet> {
  const response = await gateway.fetch('/.well-known/jwks.json');
  assert.equal(response.status, 200, response.text);
  return response.json<JSONWebKeySet>();
}

/** The one `X-Gatehouse-Assertion` the upstream received for `target` (asserting there is exactly one). */
async function assertionAt(gateway: TestDataPlane, target: string, cookie: string): Promise<string> {
  const response = await gateway.fetch(target, { headers: { cookie } });
  assert.equal(response.status, 200, response.text);
  const values = headerValues(response.json<Echo>(), 'x-gatehouse-assertion');
  assert.equal(values.length, 1, `one assertion: ${values}`);
  return values[0]!;
}

/** Verifies `token` as an upstream at `audience` would, against the gateway's JWKS. */
async function verified(gateway: TestDataPlane, token: string, audience: string): Promise<JWTPayload> {
  const { payload } = await jwtVerify(token, createLocalJWKSet(await jwks(gateway)), { issuer: PUBLIC_URL, audience, algorithms: ['ES256'] });
  return payload;
}

describe('X-Gatehouse-Assertion', () => {
  let gateway: TestDataPlane;
  before(async () => {
    gateway = await startDataPlane({ env: { PUBLIC_URL }, services });
  });
  after(() => gateway.close());

  it('a signed-in request carries an ES256 assertion of who is calling, for that service, for ASSERTION_TTL', async () => {
    const cookie = await gateway.signIn({ sub: 'ada', email: 'ada@example.com', groups: ['staff', 'ops'] });
    const token = await assertionAt(gateway, '/private/x', cookie);
    const payload = await verified(gateway, token, `${PUBLIC_URL}/private`);
    assert.deepEqual(Object.keys(payload).sort(), ['aud', 'email', 'exp', 'groups', 'iat', 'iss', 'sub']);
    assert.equal(payload.sub, 'ada');
    assert.equal(payload.email, 'ada@example.com');
    assert.deepEqual(payload.groups, ['staff', 'ops']);
    assert.equal(payload.exp! - payload.iat!, 300, 'ASSERTION_TTL, 5 minutes by default');
    assert.ok(Math.abs(payload.iat! - Date.now() / 1000) < 5);
    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, 'ES256');
    assert.equal(header.kid, gateway.assertionKeys.keySet().signing.kid);
  });

  it('comes with the other gateway fields, before any of the client\'s', async () => {
    const cookie = await gateway.signIn();
    const response = await gateway.fetch('/private/x', { headers: { cookie, 'x-client-field': '1' } });
    const names = response.json<Echo>().headers.map(([name]) => name.toLowerCase());
    const at = names.indexOf('x-gatehouse-assertion');
    assert.ok(at > names.indexOf('x-forwarded-user') && at < names.indexOf('x-client-field'), names.join(', '));
  });

  it('has no email claim without a verified email, and empty groups without any', async () => {
    const cookie = await gateway.signIn({ sub: 'unverified', email: '', groups: undefined });
    const payload = await verified(gateway, await assertionAt(gateway, '/private/x', cookie), `${PUBLIC_URL}/private`);
    assert.equal('email' in payload, false);
    assert.deepEqual(payload.groups, []);
  });

  it("is for the service's own public URL: another service's upstream would reject it", async () => {
    const cookie = await gateway.signIn({ sub: 'grace' });
    const forOther = await assertionAt(gateway, '/other/x', cookie);
    assert.equal((await verified(gateway, forOther, `${PUBLIC_URL}/other`)).sub, 'grace');
    await assert.rejects(verified(gateway, forOther, `${PUBLIC_URL}/private`), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
  });

  it('a signed-in caller of a public service gets one too; the root service is `/`', async () => {
    const cookie = await gateway.signIn({ sub: 'linus' });
    assert.equal((await verified(gateway, await assertionAt(gateway, '/app/x', cookie), `${PUBLIC_URL}/app`)).sub, 'linus');
    assert.equal((await verified(gateway, await assertionAt(gateway, '/elsewhere', cookie), `${PUBLIC_URL}/`)).sub, 'linus');
  });

  it('an anonymous request gets none, and a client-sent one never passes', async () => {
    const response = await gateway.fetch('/app/x', { headers: { 'x-gatehouse-assertion': 'forged', x_gatehouse_assertion: 'forged' } });
    const received = response.json<Echo>();
    assert.deepEqual(received.headers.filter(([name]) => /gatehouse.assertion/i.test(name)), []);
  });

  it('is signed once per caller and service while it has more than a minute left, and anew after a rotation', async () => {
    const cookie = await gateway.signIn({ sub: 'cached' });
    const first = await assertionAt(gateway, '/private/a', cookie);
    assert.equal(await assertionAt(gateway, '/private/b', cookie), first, 'the same caller and service: the same assertion');
    const sameCaller = await gateway.signIn({ sub: 'cached' });
    assert.equal(await assertionAt(gateway, '/private/c', sameCaller), first, 'the same claims from another session');
    assert.notEqual(await assertionAt(gateway, '/other/a', cookie), first, 'another service');
    assert.notEqual(await assertionAt(gateway, '/private/a', await gateway.signIn({ sub: 'cached', groups: ['new'] })), first, 'other claims');

    const { kid, previousKid } = await gateway.assertionKeys.rotate(ADMIN);
    assert.equal(decodeProtectedHeader(first).kid, previousKid);
    const afterRotation = await assertionAt(gateway, '/private/a', cookie);
    assert.notEqual(afterRotation, first);
    assert.equal(decodeProtectedHeader(afterRotation).kid, kid);
    assert.equal((await verified(gateway, afterRotation, `${PUBLIC_URL}/private`)).sub, 'cached');
    assert.equal((await verified(gateway, first, `${PUBLIC_URL}/private`)).sub, 'cached', 'the old key is still published');
  });
});

describe('GET /.well-known/jwks.json', () => {
  let gateway: TestDataPlane;
  before(async () => {
    gateway = await startDataPlane({ env: { PUBLIC_URL, ASSERTION_TTL: '10m' }, services });
  });
  after(() => gateway.close());

  it('publishes the public keys (never a private part), newest first, cacheable for a fifth of ASSERTION_TTL', async () => {
    const { kid: newKid, previousKid } = await gateway.assertionKeys.rotate(ADMIN);
    const response = await gateway.fetch('/.well-known/jwks.json');
    assert.equal(response.status, 200);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.equal(response.headers['cache-control'], 'public, max-age=120');
    const { keys } = response.json<JSONWebKeySet>();
    assert.deepEqual(keys.map((key) => key.kid), [newKid, previousKid]);
    for (const key of keys) {
      assert.deepEqual(Object.keys(key).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
      assert.deepEqual([key.kty, key.crv, key.alg, key.use], ['EC', 'P-256', 'ES256', 'sig']);
    }
    assert.equal(upstream.requests.some((request) => request.url.includes('jwks')), false, 'the service at / never sees it');
  });

  it('answers HEAD with the headers alone, other methods 405, and every spelling of the path', async () => {
    const get = await gateway.fetch('/.well-known/jwks.json');
    const head = await gateway.fetch('/.well-known/jwks.json', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.equal(head.headers['content-length'], String(Buffer.byteLength(get.text)));
    const post = await gateway.fetch('/.well-known/jwks.json', { method: 'POST', body: '{}' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.allow, 'GET, HEAD');
    assert.equal((await gateway.fetch('/.Well-Known/JWKS.json')).text, get.text);
    assert.equal((await gateway.fetch('//.well-known/%6Awks.json')).text, get.text);
    assert.equal(upstream.requests.some((request) => /jwks/i.test(request.url)), false);
  });

  it('anything below it is the gateway\'s too, never the service at /', async () => {
    await gateway.fetch('/.well-known/jwks.json/x');
    assert.deepEqual(gateway.adminRequests, ['/.well-known/jwks.json/x']);
  });
});

describe('before the data plane has any assertion key', () => {
  let gateway: TestDataPlane;
  before(async () => {
    gateway = await startDataPlane({ env: { PUBLIC_URL }, services, assertionKeys: false });
  });
  after(() => gateway.close());

  it('a protected service is not forwarded to (503); a public one is, without an assertion; the JWKS is 503', async () => {
    const cookie = await gateway.signIn();
    const seen = upstream.requests.length;
    const refused = await gateway.fetch('/private/x', { headers: { cookie } });
    assert.equal(refused.status, 503);
    assert.deepEqual(refused.json(), { error: 'Service unavailable' });
    assert.equal(upstream.requests.length, seen, 'the upstream never saw it');
    const open = await gateway.fetch('/app/x', { headers: { cookie } });
    assert.equal(open.status, 200);
    assert.deepEqual(headerValues(open.json<Echo>(), 'x-gatehouse-assertion'), []);
    assert.equal((await gateway.fetch('/.well-known/jwks.json')).status, 503);

    await gateway.assertionKeys.start(); // the admin plane's first publication
    const token = await assertionAt(gateway, '/private/x', cookie);
    assert.equal((await verified(gateway, token, `${PUBLIC_URL}/private`)).sub, 'user-123');
  });
});

describe('the assertion cache', () => {
  const route = new RouteTable([service({ path: '/private', targetUrl: 'http://127.0.0.1:1', requireAuth: true })]).lookup('/private') as Route;
  const caller = (sub: string): SessionUser => ({ sub, name: sub, email: '', isAdmin: false });

  it('keeps at most its bound, forgetting the oldest first', async () => {
    const assertions = new IdentityAssertions(new URL(PUBLIC_URL), 300_000, 2);
    assertions.useKeys(await sampleAssertionKeySet());
    const [a, b] = [assertions.assertionFor(caller('a'), route), assertions.assertionFor(caller('b'), route)];
    assert.equal(assertions.assertionFor(caller('a'), route), a);
    assertions.assertionFor(caller('c'), route); // the third: the oldest (a) goes
    assert.equal(assertions.assertionFor(caller('b'), route), b);
    assert.notEqual(assertions.assertionFor(caller('a'), route), a);
  });

  it("a session's user gets its assertion again per service, and a new one after a key rotation", async () => {
    const assertions = new IdentityAssertions(new URL(PUBLIC_URL), 300_000);
    const keys = await sampleAssertionKeySet();
    assertions.useKeys(keys);
    const other = new RouteTable([service({ path: '/other', targetUrl: 'http://127.0.0.1:1', requireAuth: true })]).lookup('/other') as Route;
    const user = caller('a');
    const first = assertions.assertionFor(user, route)!;
    const elsewhere = assertions.assertionFor(user, other)!;
    assert.equal(decodeJwt(elsewhere).aud, `${PUBLIC_URL}/other`);
    assert.equal(assertions.assertionFor(user, route), first);
    const rotated = await sampleAssertionKeySet();
    assertions.useKeys(rotated);
    const afterRotation = assertions.assertionFor(user, route)!;
    assert.notEqual(afterRotation, first);
    assert.equal(decodeProtectedHeader(afterRotation).kid, rotated.signing.kid);
  });

  it("names the service host the request came on in aud, so one app host's assertion is none for another", async () => {
    const assertions = new IdentityAssertions(new URL(PUBLIC_URL), 300_000);
    assertions.useKeys(await sampleAssertionKeySet());
    const wildcard = new RouteTable([service({ path: '/', hosts: ['*.apps.localhost'], targetUrl: 'http://127.0.0.1:1', requireAuth: true })]).lookup('/') as Route;
    const user = caller('a');
    const port = new URL(PUBLIC_URL).port;
    const audOn = (host: string) => decodeJwt(assertions.assertionFor(user, wildcard, host)!).aud;
    assert.equal(audOn('a.apps.localhost'), `http://a.apps.localhost${port ? `:${port}` : ''}/`);
    assert.equal(audOn('b.apps.localhost'), `http://b.apps.localhost${port ? `:${port}` : ''}/`, 'the same route on another host: its own aud, not the last one');
    assert.equal(decodeJwt(assertions.assertionFor(user, wildcard)!).aud, `${PUBLIC_URL}/`);
  });

  it('signs every time when ASSERTION_TTL leaves no minute to spare', async () => {
    const assertions = new IdentityAssertions(new URL(PUBLIC_URL), 60_000);
    assertions.useKeys(await sampleAssertionKeySet());
    assert.notEqual(assertions.assertionFor(caller('a'), route), assertions.assertionFor(caller('a'), route));
  });
});
