/**
 * The test identity provider (test/support/identity-provider.ts): discovery, keys, PKCE, its login
 * and consent pages, ID token claims, each tamper kind, and RP-initiated logout — driven by a tiny
 * openid-client relying party and the browserless driver; machine clients' access tokens and key
 * rotation, checked with jose.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { request } from 'undici';
import { CookieJar, loginThroughProvider, logoutThroughProvider } from './browserless-login.js';
import { parseForms } from './html-forms.js';
import { DEMO_USERS, startIdentityProvider, type IdentityProvider, type IdTokenTamperKind } from './identity-provider.js';
import { clientCredentialsToken } from './machine-client.js';
import { startTestRelyingParty, type TestRelyingParty } from './openid-relying-party.js';

const CLIENT = { clientId: 'fixture-rp', clientSecret: 'fixture-secret' };
const [ADMIN] = DEMO_USERS;
if (ADMIN === undefined) throw new Error('DEMO_USERS is empty');

async function discovery(idp: IdentityProvider): Promise<Record<string, unknown>> {
  const res = await request(`${idp.issuer}/.well-known/openid-configuration`);
  assert.equal(res.statusCode, 200);
  return (await res.body.json()) as Record<string, unknown>;
}

/** GETs `url`, following redirects, keeping cookies; returns the last response. */
async function follow(url: string, jar: CookieJar): Promise<{ url: string; status: number; body: string }> {
  for (let i = 0; i < 10; i++) {
    const res = await request(url, { headers: { cookie: jar.header(url) } });
    jar.store(res.headers['set-cookie'], url);
    const body = await res.body.text();
    const location = res.headers['location'];
    if (res.statusCode < 300 || res.statusCode >= 400 || typeof location !== 'string') return { url, status: res.statusCode, body };
    url = new URL(location, url).href;
  }
  throw new Error('too many redirects');
}

/** The last callback of `rp` must have failed; returns its error code and what was wrong. */
function lastRejection(rp: TestRelyingParty): { code: string; detail: string } {
  const result = rp.results.at(-1);
  assert.ok(result && !result.ok, 'the relying party should have rejected the callback');
  const err = result.error as { code?: string; cause?: { message?: string; cause?: { claim?: string } } };
  return { code: String(err.code), detail: err.cause?.cause?.claim ?? String(err.cause?.message) };
}

describe('identity provider with a confidential client', () => {
  let rp: TestRelyingParty;
  let idp: IdentityProvider;

  before(async () => {
    rp = await startTestRelyingParty();
    idp = await startIdentityProvider({
      clients: [{ ...CLIENT, redirectUris: [rp.callbackUrl], postLogoutRedirectUris: [rp.loggedOutUrl] }],
    });
    await rp.connect({ issuer: idp.issuer, ...CLIENT, responseMode: 'form_post', nonRepudiation: true });
  });
  after(async () => {
    await idp.close();
    await rp.close();
  });

  const login = () => loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password });

  test('discovery: issuer, code flow with S256, form_post and query, end_session_endpoint', async () => {
    const doc = await discovery(idp);
    assert.equal(doc['issuer'], idp.issuer);
    assert.match(idp.issuer, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(doc['response_types_supported'], ['code']);
    assert.deepEqual(doc['code_challenge_methods_supported'], ['S256']);
    assert.ok((doc['response_modes_supported'] as string[]).includes('form_post'));
    assert.ok((doc['response_modes_supported'] as string[]).includes('query'));
    assert.equal(doc['end_session_endpoint'], `${idp.issuer}/session/end`);
    assert.deepEqual(doc['id_token_signing_alg_values_supported'], ['RS256']);
  });

  test('jwks publishes one public RS256 key with a kid and no private parts', async () => {
    const res = await request(`${idp.issuer}/jwks`);
    const { keys } = (await res.body.json()) as { keys: Array<Record<string, unknown>> };
    assert.equal(keys.length, 1);
    assert.equal(keys[0]?.['kty'], 'RSA');
    assert.equal(keys[0]?.['alg'], 'RS256');
    assert.equal(typeof keys[0]?.['kid'], 'string');
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(keys[0]?.[secret], undefined, secret);
  });

  test('PKCE is required: an authorization request without code_challenge is refused', async () => {
    const url = new URL(`${idp.issuer}/auth`);
    url.search = new URLSearchParams({ client_id: CLIENT.clientId, response_type: 'code', scope: 'openid', redirect_uri: rp.callbackUrl, state: 'st' }).toString();
    const res = await request(url);
    await res.body.dump();
    const location = new URL(String(res.headers['location']));
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.match(location.searchParams.get('error_description') ?? '', /PKCE/);
  });

  test('login page: #email, #password, submit button; wrong password shows it again with an error; then consent', async () => {
    const jar = new CookieJar();
    const page = await follow(`${rp.url}/login`, jar);
    assert.equal(page.status, 200);
    assert.match(page.url, /\/interaction\/[\w-]+$/);
    const [form] = parseForms(page.body, page.url);
    assert.equal(form?.method, 'post');
    assert.equal(form?.action, `${page.url}/login`);
    assert.deepEqual(form?.fields.map((f) => [f.id, f.name, f.type]), [['email', 'email', 'email'], ['password', 'password', 'password']]);
    assert.match(page.body, /<button id="login-submit" type="submit">/);

    const post = (url: string, body: string) =>
      request(url, { method: 'POST', body, headers: { cookie: jar.header(url), 'content-type': 'application/x-www-form-urlencoded' } });
    const wrong = await post(`${page.url}/login`, new URLSearchParams({ email: ADMIN.email, password: 'not-it' }).toString());
    const wrongBody = await wrong.body.text();
    assert.equal(wrong.statusCode, 200);
    assert.match(wrongBody, /id="login-error"[^>]*>Invalid email or password\./);
    assert.match(wrongBody, /id="password"/);

    const right = await post(`${page.url}/login`, new URLSearchParams({ email: ADMIN.email, password: ADMIN.password }).toString());
    await right.body.dump();
    assert.equal(right.statusCode, 303);
    const consent = await follow(new URL(String(right.headers['location']), page.url).href, jar);
    assert.match(consent.url, /\/interaction\/[\w-]+$/);
    assert.match(consent.body, /<form id="consent-form" method="post" action="\/interaction\/[\w-]+\/confirm">/);
    assert.match(consent.body, /<button id="consent-submit" type="submit">Continue<\/button>/);
  });

  test('an interaction page without its cookie answers 400', async () => {
    const res = await request(`${idp.issuer}/interaction/not-a-real-uid`);
    assert.equal(res.statusCode, 400);
    assert.match(await res.body.text(), /expired or its cookie is missing/);
  });

  test('the ID token holds sub, email, email_verified, name and groups, signed by the published key', async () => {
    const result = await login();
    assert.equal(result.finalLocation, '/welcome');
    const last = rp.results.at(-1);
    assert.ok(last?.ok, 'login should succeed');
    const { claims } = last;
    assert.equal(claims.sub, ADMIN.sub);
    assert.equal(claims['email'], ADMIN.email);
    assert.equal(claims['email_verified'], true);
    assert.equal(claims['name'], ADMIN.name);
    assert.deepEqual(claims['groups'], ADMIN.groups);
    assert.equal(claims.aud, CLIENT.clientId);
  });

  const expectations: Record<IdTokenTamperKind, { code: string; detail: RegExp }> = {
    'wrong-aud': { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', detail: /^aud$/ },
    'wrong-iss': { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', detail: /^iss$/ },
    'wrong-nonce': { code: 'OAUTH_JWT_CLAIM_COMPARISON_FAILED', detail: /^nonce$/ },
    expired: { code: 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED', detail: /^exp$/ },
    'bad-signature': { code: 'OAUTH_INVALID_RESPONSE', detail: /signature verification failed/ },
  };
  for (const [kind, expected] of Object.entries(expectations) as Array<[IdTokenTamperKind, { code: string; detail: RegExp }]>) {
    test(`tamperNextIdToken('${kind}') makes authorizationCodeGrant reject, once`, async () => {
      idp.tamperNextIdToken(kind);
      const tampered = await login();
      assert.equal(tampered.status, 400);
      const rejection = lastRejection(rp);
      assert.equal(rejection.code, expected.code);
      assert.match(rejection.detail, expected.detail);

      const next = await login();
      assert.equal(next.finalLocation, '/welcome', 'the tamper applies to one token only');
      assert.ok(rp.results.at(-1)?.ok);
    });
  }

  test('bad-signature passes openid-client without enableNonRepudiationChecks (a relying party must enable it)', async () => {
    await rp.connect({ issuer: idp.issuer, ...CLIENT, responseMode: 'form_post', nonRepudiation: false });
    try {
      idp.tamperNextIdToken('bad-signature');
      const result = await login();
      assert.equal(result.finalLocation, '/welcome');
    } finally {
      await rp.connect({ issuer: idp.issuer, ...CLIENT, responseMode: 'form_post', nonRepudiation: true });
    }
  });

  test('RP-initiated logout returns to post_logout_redirect_uri and ends the IdP session', async () => {
    const jar = new CookieJar();
    const signedIn = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password, jar });
    assert.equal(signedIn.finalLocation, '/welcome');
    assert.ok(jar.get('_session', idp.issuer), 'the IdP keeps a session cookie');

    const out = await logoutThroughProvider({ logoutUrl: `${rp.url}/logout`, jar });
    assert.equal(out.url, rp.loggedOutUrl);
    assert.equal(out.status, 200);
    assert.equal(jar.get('_session', idp.issuer), undefined, 'the IdP session cookie is deleted');

    const again = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: 'wrong', jar });
    assert.equal(again.status, 200, 'signing in again asks for the password');
    assert.match(again.body, /id="login-error"/);
  });
});

describe('identity provider options', () => {
  test("responseModes 'query-only': no form_post in discovery, a form_post request is refused", async () => {
    const rp = await startTestRelyingParty();
    const idp = await startIdentityProvider({
      responseModes: 'query-only',
      clients: [{ clientId: 'public-rp', redirectUris: [rp.callbackUrl], postLogoutRedirectUris: [] }],
    });
    try {
      assert.deepEqual((await discovery(idp))['response_modes_supported'], ['query', 'fragment']);
      await rp.connect({ issuer: idp.issuer, clientId: 'public-rp', responseMode: 'form_post' });
      const result = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password });
      assert.equal(result.status, 400);
      const last = rp.results.at(-1);
      assert.ok(last && !last.ok);
      const refusal = last.error as { error?: string; error_description?: string };
      assert.equal(refusal.error, 'invalid_request');
      assert.match(String(refusal.error_description), /response_mode is not allowed/);

      await rp.connect({ issuer: idp.issuer, clientId: 'public-rp', responseMode: 'query' });
      const ok = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password });
      assert.equal(ok.finalLocation, '/welcome');
    } finally {
      await idp.close();
      await rp.close();
    }
  });

  test('userinfoOnlyClaims: the ID token leaves those claims out and keeps the others', async () => {
    const rp = await startTestRelyingParty();
    const idp = await startIdentityProvider({
      userinfoOnlyClaims: ['groups'],
      clients: [{ ...CLIENT, redirectUris: [rp.callbackUrl], postLogoutRedirectUris: [] }],
    });
    try {
      await rp.connect({ issuer: idp.issuer, ...CLIENT, responseMode: 'form_post' });
      const result = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password });
      assert.equal(result.finalLocation, '/welcome');
      const last = rp.results.at(-1);
      assert.ok(last?.ok, 'login should succeed');
      assert.equal(last.claims['groups'], undefined);
      assert.equal(last.claims['email'], ADMIN.email);
      assert.equal(last.claims['name'], ADMIN.name);
    } finally {
      await idp.close();
      await rp.close();
    }
  });

  test('endSession false: no end_session_endpoint and /session/end is not found', async () => {
    const idp = await startIdentityProvider({ endSession: false, clients: [{ clientId: 'x', redirectUris: ['http://127.0.0.1:1/cb'], postLogoutRedirectUris: [] }] });
    try {
      assert.equal((await discovery(idp))['end_session_endpoint'], undefined);
      const res = await request(`${idp.issuer}/session/end`);
      await res.body.dump();
      assert.equal(res.statusCode, 404);
    } finally {
      await idp.close();
    }
  });

  test('a fixed port is honoured and close() frees it', async () => {
    const first = await startIdentityProvider({ clients: [] });
    await first.close();
    const second = await startIdentityProvider({ port: first.port, clients: [] });
    try {
      assert.equal(second.issuer, `http://127.0.0.1:${first.port}`);
      assert.equal((await discovery(second))['issuer'], second.issuer);
    } finally {
      await second.close();
    }
  });
});

describe('identity provider machine clients', () => {
  const MACHINE = { clientId: 'fixture-machine', clientSecret: 'machine-secret' };
  const API = 'https://api.fixture.test';
  let idp: IdentityProvider;

  before(async () => {
    idp = await startIdentityProvider({
      clients: [],
      machineClients: [{ ...MACHINE, claims: { groups: ['robots'] } }],
      apiResources: [API, 'https://other-api.fixture.test'],
    });
  });
  after(() => idp.close());

  const token = (resource = API) => clientCredentialsToken({ issuer: idp.issuer, ...MACHINE, resource });
  const keySet = () => createRemoteJWKSet(new URL(`${idp.issuer}/jwks`));

  test('client credentials: a JWT access token (RFC 9068) for the resource, signed with the published key', async () => {
    assert.ok(((await discovery(idp))['grant_types_supported'] as string[]).includes('client_credentials'));
    const accessToken = await token();
    const { payload, protectedHeader } = await jwtVerify(accessToken, keySet(), { issuer: idp.issuer, audience: API });
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.sub, MACHINE.clientId);
    assert.equal(payload['client_id'], MACHINE.clientId);
    assert.deepEqual(payload['groups'], ['robots']);
    assert.equal(payload.exp! - payload.iat!, 3600);
  });

  test('a resource not among apiResources, or a wrong secret, gets no token', async () => {
    await assert.rejects(token('https://unknown.fixture.test'), /invalid_target/);
    await assert.rejects(clientCredentialsToken({ issuer: idp.issuer, ...MACHINE, clientSecret: 'wrong', resource: API }), /invalid_client/);
  });

  test('tamperNextAccessToken: one forged token, its claim wrong, then real ones again', async () => {
    idp.tamperNextAccessToken('expired');
    const expired = await token();
    await assert.rejects(jwtVerify(expired, keySet(), { issuer: idp.issuer, audience: API }), /"exp" claim timestamp check failed/);
    idp.tamperNextAccessToken('bad-signature');
    await assert.rejects(jwtVerify(await token(), keySet(), { issuer: idp.issuer, audience: API }), /signature verification failed/);
    await jwtVerify(await token(), keySet(), { issuer: idp.issuer, audience: API });
  });

  test('rotateSigningKeys: a new kid signs, the earlier key stays published, on the same issuer', async () => {
    const before = decodeProtectedHeader(await token()).kid;
    const rotated = await idp.rotateSigningKeys();
    assert.notEqual(rotated, before);
    const accessToken = await token();
    assert.equal(decodeProtectedHeader(accessToken).kid, rotated);
    const { keys } = (await (await request(`${idp.issuer}/jwks`)).body.json()) as { keys: Array<{ kid: string; d?: string }> };
    assert.deepEqual(keys.map((key) => key.kid), [rotated, before]);
    assert.ok(keys.every((key) => key.d === undefined), 'public keys only');
    await jwtVerify(accessToken, keySet(), { issuer: idp.issuer, audience: API });
    assert.equal((await discovery(idp))['issuer'], idp.issuer);

    const retiring = await idp.rotateSigningKeys({ retire: true });
    const { keys: left } = (await (await request(`${idp.issuer}/jwks`)).body.json()) as { keys: Array<{ kid: string }> };
    assert.deepEqual(left.map((key) => key.kid), [retiring], 'retire: only the new key is published');
  });
});
