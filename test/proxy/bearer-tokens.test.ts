/**
 * Machine clients on protected services (design.md §4.7), in the data plane over the embedded
 * backends: real client-credentials tokens from the test identity provider, and forgeries of each
 * check the gateway must make (bearer-token-cases.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SignJWT, decodeProtectedHeader, generateKeyPair } from 'jose';
import { badBearerTokens, tokenFor } from '../support/bearer-token-cases.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startIdentityProvider, type IdentityProvider, type IdentityProviderMachineClient } from '../support/identity-provider.js';
import { service } from '../support/samples.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type ClientResponse, type TestDataPlane } from '../support/data-plane.js';

const API = 'https://api.gatehouse.test';
const OTHER_API = 'https://other-api.gatehouse.test';
const ROBOT: IdentityProviderMachineClient = { clientId: 'robot', clientSecret: 'robot-secret' };
const MAILER: IdentityProviderMachineClient = {
  clientId: 'mailer',
  clientSecret: 'mailer-secret',
  claims: { email: 'mailer@example.com', email_verified: true, groups: ['robots'] },
};
const INVALID_TOKEN = 'Bearer error="invalid_token"';

/** Starts an identity provider whose machine clients get tokens for {@link API} and {@link OTHER_API}. */
function startProvider(): Promise<IdentityProvider> {
  return startIdentityProvider({ clients: [], machineClients: [ROBOT, MAILER], apiResources: [API, OTHER_API] });
}

function tokenFrom(idp: IdentityProvider, client = ROBOT): Promise<string> {
  return tokenFor({ idp, client, resource: API });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A 401 for a bad token: JSON, the RFC 6750 §3.1 challenge. */
function assertInvalidToken(response: ClientResponse, what: string): void {
  assert.equal(response.status, 401, what);
  assert.deepEqual(response.json(), { error: 'Not authenticated' }, what);
  assert.equal(response.headers['www-authenticate'], INVALID_TOKEN, what);
}

describe('bearer tokens on protected services', () => {
  let idp: IdentityProvider;
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;
  const forwarding = { path: '/forwarding', forwardAuthorization: true, requireAuth: true };

  before(async () => {
    idp = await startProvider();
    upstream = await startEchoUpstream();
    gateway = await startDataPlane({
      env: { OIDC_ISSUER: idp.issuer, OIDC_API_AUDIENCES: `${API}, https://third.gatehouse.test` },
      services: [
        service({ path: '/private', targetUrl: upstream.origin, requireAuth: true }),
        service({ ...forwarding, targetUrl: upstream.origin }),
        service({ path: '/public', targetUrl: upstream.origin }),
        service({ path: '/robots-only', targetUrl: upstream.origin, requireAuth: true, access: { groups: ['robots'], emails: [], emailDomains: [], subjects: [] } }),
        service({ path: '/off', targetUrl: upstream.origin, requireAuth: true, enabled: false }),
        service({ path: '/hooked', targetUrl: upstream.origin, requireAuth: true, rules: [{ paths: ['/hooks'], action: 'public' }] }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    await idp.close();
  });

  it('accepts a client-credentials token: the upstream gets its sub as X-Forwarded-User, never the token', async () => {
    const token = await tokenFrom(idp);
    const response = await gateway.fetch('/private/items?x=1', { headers: bearer(token) });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), [ROBOT.clientId]);
    assert.deepEqual(headerValues(received, 'x-forwarded-email'), []);
    assert.deepEqual(headerValues(received, 'authorization'), [], 'the token stays at the gateway');
    const record = await gateway.waitForRecord((entry) => entry.path === '/private/items?x=1');
    assert.equal(record.userId, ROBOT.clientId);
    assert.equal(record.statusCode, 200);
  });

  it('reads the token\'s claims as a session\'s: a verified email is forwarded', async () => {
    const response = await gateway.fetch('/private/x', { headers: bearer(await tokenFrom(idp, MAILER)) });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), [MAILER.clientId]);
    assert.deepEqual(headerValues(received, 'x-forwarded-email'), ['mailer@example.com']);
  });

  it("applies the service's access policy to the token's claims: its groups allow, their absence refuses (403)", async () => {
    const allowed = await gateway.fetch('/robots-only/x', { headers: bearer(await tokenFrom(idp, MAILER)) });
    assert.equal(allowed.status, 200);
    assert.deepEqual(headerValues(allowed.json<Echo>(), 'x-forwarded-user'), [MAILER.clientId]);
    const refused = await gateway.fetch('/robots-only/y', { headers: bearer(await tokenFrom(idp)) });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.json(), { error: 'Access denied' });
    const record = await gateway.waitForRecord((entry) => entry.path === '/robots-only/y');
    assert.deepEqual([record.statusCode, record.userId], [403, ROBOT.clientId]);
  });

  it('under a public rule (design.md §4.18) a token that verifies names the caller, one that does not is ignored, not a 401', async () => {
    const named = await gateway.fetch('/hooked/hooks/x', { headers: bearer(await tokenFrom(idp)) });
    assert.equal(named.status, 200);
    assert.deepEqual(headerValues(named.json<Echo>(), 'x-forwarded-user'), [ROBOT.clientId]);
    const ignored = await gateway.fetch('/hooked/hooks/x', { headers: bearer('not-a-token') });
    assert.equal(ignored.status, 200);
    assert.deepEqual(headerValues(ignored.json<Echo>(), 'x-forwarded-user'), []);
    assertInvalidToken(await gateway.fetch('/hooked/other', { headers: bearer('not-a-token') }), 'elsewhere in the service');
  });

  it('forwards the Authorization field unchanged to a service with forwardAuthorization', async () => {
    const token = await tokenFrom(idp);
    const response = await gateway.fetch('/forwarding/x', { headers: { AUTHORIZATION: `bearer ${token}` } });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'authorization'), [`bearer ${token}`]);
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), [ROBOT.clientId]);
  });

  it('answers 401 invalid_token to expired, wrongly addressed, forged and unsigned tokens, forwarding nothing', async () => {
    const cases = await badBearerTokens({ idp, client: ROBOT, resource: API }, OTHER_API);
    const before = upstream.requests.length;
    for (const [what, token] of Object.entries(cases)) {
      assertInvalidToken(await gateway.fetch(`/private/${encodeURIComponent(what)}`, { headers: bearer(token) }), what);
    }
    assert.equal(upstream.requests.length, before, 'no bad token reached the upstream');
    const record = await gateway.waitForRecord((entry) => entry.path === '/private/expired');
    assert.deepEqual([record.statusCode, record.userId], [401, null]);
  });

  it('finds a rotated key by its unknown kid, and keeps accepting tokens of the earlier key', async () => {
    const earlier = await tokenFrom(idp);
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(earlier) })).status, 200);
    const kid = await idp.rotateSigningKeys();
    const rotated = await tokenFrom(idp);
    assert.equal(decodeProtectedHeader(rotated).kid, kid);
    // The key set is fetched again for an unknown kid at most once a second (design.md §4.7).
    await eventually('a token of the rotated key accepted', async () => (await gateway.fetch('/private/x', { headers: bearer(rotated) })).status === 200);
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(await tokenFrom(idp)) })).status, 200);
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(earlier) })).status, 200);
  });

  it('accepts a verified token until its exp from the cache, even once its key is retired', async () => {
    const [verified, unseen] = [await tokenFrom(idp), await tokenFrom(idp, MAILER)];
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(verified) })).status, 200);
    await idp.rotateSigningKeys({ retire: true });
    const rotated = await tokenFrom(idp);
    // The new kid makes the gateway fetch the key set that no longer has the earlier key.
    await eventually('a token of the new key accepted', async () => (await gateway.fetch('/private/x', { headers: bearer(rotated) })).status === 200);
    assertInvalidToken(await gateway.fetch('/private/x', { headers: bearer(unseen) }), 'a token of the retired key, never verified');
    const cached = await gateway.fetch('/private/x', { headers: bearer(verified) });
    assert.equal(cached.status, 200, 'a token verified before: cached until its exp');
    assert.deepEqual(headerValues(cached.json<Echo>(), 'x-forwarded-user'), [ROBOT.clientId]);
  });

  it('prefers the session: a signed-in request is not judged by its token, which is still withheld', async () => {
    const cookie = await gateway.signIn({ sub: 'session-user' });
    const response = await gateway.fetch('/private/x', { headers: { cookie, ...bearer('not-a-token') } });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), ['session-user']);
    assert.deepEqual(headerValues(received, 'authorization'), []);
  });

  it('challenges a request without credentials (RFC 6750 §3), a Basic one too, and passes Basic on with a session', async () => {
    const requests: Array<Record<string, string>> = [{}, { authorization: 'Basic dXNlcjpwYXNz' }, { accept: 'text/html' }];
    for (const headers of requests) {
      const response = await gateway.fetch('/private/x', { headers });
      assert.equal(response.status, 401);
      assert.equal(response.headers['www-authenticate'], 'Bearer');
    }
    const cookie = await gateway.signIn();
    const received = (await gateway.fetch('/private/x', { headers: { cookie, authorization: 'Basic dXNlcjpwYXNz' } })).json<Echo>();
    assert.deepEqual(headerValues(received, 'authorization'), ['Basic dXNlcjpwYXNz']);
  });

  it('leaves public services as they were: no check, the field forwarded, no identity', async () => {
    const response = await gateway.fetch('/public/x', { headers: bearer('anything-at-all') });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'authorization'), ['Bearer anything-at-all']);
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), []);
  });

  it('answers a disabled service 503 without checking the token', async () => {
    const response = await gateway.fetch('/off/x', { headers: bearer('not-a-token') });
    assert.equal(response.status, 503);
    assert.deepEqual(response.json(), { error: 'Service is disabled' });
  });

  it('refuses two Authorization fields, the header being no list (RFC 9110 §11.6.2)', async () => {
    const token = await tokenFrom(idp);
    assertInvalidToken(await gateway.fetch('/private/x', { headers: { authorization: [`Bearer ${token}`, `Bearer ${token}`] } }), 'two fields');
  });
});

describe('bearer tokens while the identity provider is unreachable', () => {
  let idp: IdentityProvider;
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    idp = await startProvider();
    upstream = await startEchoUpstream();
    gateway = await startDataPlane({
      env: { OIDC_ISSUER: idp.issuer, OIDC_API_AUDIENCES: API },
      services: [service({ path: '/private', targetUrl: upstream.origin, requireAuth: true })],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('keeps checking tokens with the keys it has, and answers 503 for one that needs the provider', async () => {
    const [verified, unseen] = [await tokenFrom(idp), await tokenFrom(idp, MAILER)];
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(verified) })).status, 200);
    await idp.close();
    assert.equal((await gateway.fetch('/private/x', { headers: bearer(verified) })).status, 200);
    // Its kid is known, so the key set fetched before checks it: a new token of the same key passes.
    const known = await gateway.fetch('/private/x', { headers: bearer(unseen) });
    assert.equal(known.status, 200);
    assert.deepEqual(headerValues(known.json<Echo>(), 'x-forwarded-user'), [MAILER.clientId]);
    // An unknown kid needs the key set again: refused as unknown within a second of the last
    // fetch (design.md §4.7), then fetched, and the provider is down.
    const rotatedAway = await tokenWithUnknownKid(idp.issuer);
    let down: ClientResponse | undefined;
    await eventually('the key set fetched again', async () => (down = await gateway.fetch('/private/x', { headers: bearer(rotatedAway) })).status !== 401);
    assert.equal(down!.status, 503);
    assert.deepEqual(down!.json(), { error: 'Identity provider unavailable' });
    assert.equal((await gateway.fetch('/private/x')).status, 401, 'no token: nothing to ask the provider');
  });
});

describe('bearer tokens while the identity provider has not started yet', () => {
  it('answers 503 until discovery succeeds, then accepts its tokens', async () => {
    const port = await freePort();
    const upstream = await startEchoUpstream();
    const gateway = await startDataPlane({
      env: { OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_API_AUDIENCES: API },
      services: [service({ path: '/private', targetUrl: upstream.origin, requireAuth: true })],
    });
    let idp: IdentityProvider | undefined;
    try {
      const early = await gateway.fetch('/private/x', { headers: bearer('a.b.c') });
      assert.equal(early.status, 503);
      assert.deepEqual(early.json(), { error: 'Identity provider unavailable' });
      idp = await startIdentityProvider({ port, clients: [], machineClients: [ROBOT], apiResources: [API] });
      const token = await tokenFrom(idp);
      await eventually('discovery retried', async () => (await gateway.fetch('/private/x', { headers: bearer(token) })).status === 200);
    } finally {
      await gateway.close();
      await upstream.close();
      await idp?.close();
    }
  });
});

describe('bearer tokens with OIDC_API_AUDIENCES unset', () => {
  let idp: IdentityProvider;
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    idp = await startProvider();
    upstream = await startEchoUpstream();
    gateway = await startDataPlane({
      env: { OIDC_ISSUER: idp.issuer },
      services: [
        service({ path: '/private', targetUrl: upstream.origin, requireAuth: true }),
        service({ path: '/public', targetUrl: upstream.origin }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
    await idp.close();
  });

  it('answers 401 Not authenticated to a valid token, without a challenge', async () => {
    const response = await gateway.fetch('/private/x', { headers: bearer(await tokenFrom(idp)) });
    assert.equal(response.status, 401);
    assert.deepEqual(response.json(), { error: 'Not authenticated' });
    assert.equal(response.headers['www-authenticate'], undefined);
  });

  it('forwards the Authorization field as any other, to protected and public services', async () => {
    const token = await tokenFrom(idp);
    const cookie = await gateway.signIn();
    for (const [path, headers] of [['/private/x', { cookie }], ['/public/x', {}]] as const) {
      const received = (await gateway.fetch(path, { headers: { ...headers, ...bearer(token) } })).json<Echo>();
      assert.deepEqual(headerValues(received, 'authorization'), [`Bearer ${token}`], path);
    }
  });
});

/** A token under a `kid` the issuer never published, signed by a key of our own. */
async function tokenWithUnknownKid(issuer: string): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iss: issuer, aud: API, sub: 'x', exp: now + 60 }).setProtectedHeader({ alg: 'RS256', kid: 'unknown-kid' }).sign(privateKey);
}
