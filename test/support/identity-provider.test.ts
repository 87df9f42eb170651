/**
 * The test identity provider (test/support/identity-provider.ts): discovery, keys, PKCE, its login
 * and consent pages, ID token claims, each tamper kind, and RP-initiated logout — driven by a tiny
 * openid-client relying party and the browserless driver; machine clients' access tokens and key
 * rotation, checked with jose; refresh tokens, account changes, outages and back-channel logout,
 * driven over raw HTTP (the code flow walked by the browserless driver, the token endpoint POSTed).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { request } from 'undici';
import { CookieJar, browse, loginThroughProvider, logoutThroughProvider } from './browserless-login.js';
import { parseForms } from './html-forms.js';
import { DEMO_USERS, startIdentityProvider, type DemoUser, type IdentityProvider, type IdTokenTamperKind } from './identity-provider.js';
import { closeServer, listen } from './listen.js';
import { clientCredentialsToken } from './machine-client.js';
import { openRawConnection } from './raw-connection.js';
import { startTestRelyingParty, type TestRelyingParty } from './openid-relying-party.js';
import { Recorder } from './recorder.js';

const CLIENT = { clientId: 'fixture-rp', clientSecret: 'fixture-secret' };
const [ADMIN, USER] = DEMO_USERS;
if (ADMIN === undefined || USER === undefined) throw new Error('DEMO_USERS needs two users');

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

/** A token endpoint answer: its status and JSON body. */
interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** A client as the token endpoint authenticates it: `client_secret_basic` with a secret, else `client_id` in the body. */
interface ClientCredentials {
  clientId: string;
  clientSecret?: string;
}

/** POSTs `params` to the token endpoint as `client` (RFC 6749 §3.2). */
async function tokenRequest(idp: IdentityProvider, client: ClientCredentials, params: Record<string, string>): Promise<TokenAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const form = new URLSearchParams(params);
  if (client.clientSecret === undefined) form.set('client_id', client.clientId);
  else headers['authorization'] = `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`;
  const res = await request(`${idp.issuer}/token`, { method: 'POST', headers, body: form.toString() });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

function refresh(idp: IdentityProvider, client: ClientCredentials, refreshToken: unknown): Promise<TokenAnswer> {
  return tokenRequest(idp, client, { grant_type: 'refresh_token', refresh_token: String(refreshToken) });
}

/** A relying party's `redirect_uri` (and post-logout page) that only answers 200: a walk ends there, the code in its URL. */
async function startLandingPage(): Promise<{ origin: string; callbackUrl: string; loggedOutUrl: string; close(): Promise<void> }> {
  const server = createServer((_req, res) => res.end('landed'));
  const origin = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`;
  return { origin, callbackUrl: `${origin}/callback`, loggedOutUrl: `${origin}/logged-out`, close: () => closeServer(server) };
}

/** What a sign-in gave: the token endpoint's answer to the code, and the browser's cookies at the provider. */
interface SignIn {
  tokens: Record<string, unknown>;
  jar: CookieJar;
}

/**
 * Signs `user` in with the authorization code flow (PKCE S256, `response_mode=query`, no `prompt`)
 * through the provider's login and consent pages, then redeems the code as `client`.
 */
async function signIn(
  idp: IdentityProvider,
  landing: { origin: string; callbackUrl: string },
  client: ClientCredentials,
  user: DemoUser,
  scope: string,
): Promise<SignIn> {
  const verifier = randomBytes(32).toString('base64url');
  const authorize = new URL(`${idp.issuer}/auth`);
  authorize.search = new URLSearchParams({
    client_id: client.clientId,
    response_type: 'code',
    response_mode: 'query',
    scope,
    redirect_uri: landing.callbackUrl,
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  }).toString();
  const jar = new CookieJar();
  const walk = await browse(authorize.href, jar, { email: user.email, password: user.password }, landing.origin);
  const code = new URL(walk.url).searchParams.get('code');
  assert.ok(code, `the walk should end at the callback with a code, not ${walk.url} (${walk.status})`);
  const answer = await tokenRequest(idp, client, { grant_type: 'authorization_code', code, redirect_uri: landing.callbackUrl, code_verifier: verifier });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return { tokens: answer.body, jar };
}

/** The ID token's claims, once its signature (the published keys), `iss` and `aud` check out. */
async function verifiedIdToken(idp: IdentityProvider, idToken: unknown, clientId: string): Promise<Record<string, unknown>> {
  const { payload } = await jwtVerify(String(idToken), createRemoteJWKSet(new URL(`${idp.issuer}/jwks`)), { issuer: idp.issuer, audience: clientId });
  return payload;
}

describe('identity provider refresh tokens, account changes and outages', () => {
  const PUBLIC = { clientId: 'fixture-public-rp' };
  const OFFLINE = 'openid profile email offline_access';
  let landing: Awaited<ReturnType<typeof startLandingPage>>;
  let idp: IdentityProvider;

  before(async () => {
    landing = await startLandingPage();
    const registered = { redirectUris: [landing.callbackUrl], postLogoutRedirectUris: [landing.loggedOutUrl] };
    idp = await startIdentityProvider({ refreshTokens: true, clients: [{ ...CLIENT, ...registered }, { ...PUBLIC, ...registered }] });
  });
  after(async () => {
    await idp.close();
    await landing.close();
  });

  test('offline_access without prompt=consent yields a refresh token; without offline_access, none', async () => {
    const doc = await discovery(idp);
    assert.ok((doc['scopes_supported'] as string[]).includes('offline_access'));
    assert.ok((doc['grant_types_supported'] as string[]).includes('refresh_token'));

    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, OFFLINE);
    assert.equal(typeof tokens['refresh_token'], 'string');
    assert.ok(String(tokens['scope']).split(' ').includes('offline_access'), `granted: ${String(tokens['scope'])}`);

    const { tokens: online } = await signIn(idp, landing, CLIENT, ADMIN, 'openid profile email');
    assert.equal(online['refresh_token'], undefined);
  });

  test('the refresh_token grant answers an ID token with the current groups; a confidential client keeps its refresh token', async () => {
    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, OFFLINE);
    assert.deepEqual((await verifiedIdToken(idp, tokens['id_token'], CLIENT.clientId))['groups'], ADMIN.groups);

    idp.setUserGroups(ADMIN.sub, ['staff', 'auditors']);
    try {
      const refreshed = await refresh(idp, CLIENT, tokens['refresh_token']);
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      const claims = await verifiedIdToken(idp, refreshed.body['id_token'], CLIENT.clientId);
      assert.equal(claims['sub'], ADMIN.sub);
      assert.deepEqual(claims['groups'], ['staff', 'auditors']);
      assert.equal(claims['email'], ADMIN.email);
      assert.equal(claims['name'], ADMIN.name);
      assert.equal(typeof refreshed.body['access_token'], 'string');
      assert.equal(refreshed.body['refresh_token'], tokens['refresh_token'], 'no rotation before 70% of its lifetime');
      assert.deepEqual(DEMO_USERS[0]?.groups, ['gatehouse-admins', 'staff'], 'the shared DEMO_USERS are not changed');
    } finally {
      idp.setUserGroups(ADMIN.sub, ADMIN.groups);
    }
  });

  test('a public client gets a new refresh token at each use; the spent one is refused and revokes the grant', async () => {
    const { tokens } = await signIn(idp, landing, PUBLIC, ADMIN, OFFLINE);
    const first = await refresh(idp, PUBLIC, tokens['refresh_token']);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.notEqual(first.body['refresh_token'], tokens['refresh_token']);

    const reused = await refresh(idp, PUBLIC, tokens['refresh_token']);
    assert.equal(reused.status, 400);
    assert.equal(reused.body['error'], 'invalid_grant');
    const afterReuse = await refresh(idp, PUBLIC, first.body['refresh_token']);
    assert.equal(afterReuse.status, 400, 'reuse detection revoked the whole grant');
    assert.equal(afterReuse.body['error'], 'invalid_grant');
  });

  test('offline access outlives the provider session: after RP-initiated logout the refresh token still works', async () => {
    const { tokens, jar } = await signIn(idp, landing, CLIENT, ADMIN, OFFLINE);
    const endSession = `${idp.issuer}/session/end?${new URLSearchParams({ id_token_hint: String(tokens['id_token']), post_logout_redirect_uri: landing.loggedOutUrl })}`;
    assert.equal((await browse(endSession, jar, undefined, landing.origin)).url, landing.loggedOutUrl);
    assert.equal(jar.get('_session', idp.issuer), undefined, 'the provider session is over');
    const refreshed = await refresh(idp, CLIENT, tokens['refresh_token']);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  });

  test('stop() refuses connections; resume() serves on the same port and the refresh token still works', async () => {
    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, OFFLINE);
    await idp.stop();
    try {
      await assert.rejects(openRawConnection(idp.port), { code: 'ECONNREFUSED' });
      // Refused, or (undici's keep-alive connection from the sign-in, closed under it) "other side closed".
      await assert.rejects(refresh(idp, CLIENT, tokens['refresh_token']), { code: /^(ECONNREFUSED|UND_ERR_SOCKET)$/ });
    } finally {
      await idp.resume();
    }
    assert.equal((await discovery(idp))['issuer'], idp.issuer);
    const refreshed = await refresh(idp, CLIENT, tokens['refresh_token']);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
  });

  test('failTokenRequests(503): 503 temporarily_unavailable without processing; null: normal again; tokenRequests counts them all', async () => {
    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, OFFLINE);
    const before = { all: idp.tokenRequests(), refresh: idp.tokenRequests('refresh_token'), code: idp.tokenRequests('authorization_code') };

    idp.failTokenRequests(503);
    const failed = await refresh(idp, CLIENT, tokens['refresh_token']);
    assert.equal(failed.status, 503);
    assert.deepEqual(failed.body, { error: 'temporarily_unavailable' });
    idp.failTokenRequests(null);
    const refreshed = await refresh(idp, CLIENT, tokens['refresh_token']);
    assert.equal(refreshed.status, 200, 'the refused request did not touch the refresh token');

    assert.equal(idp.tokenRequests('refresh_token'), before.refresh + 2);
    assert.equal(idp.tokenRequests('authorization_code'), before.code);
    assert.equal(idp.tokenRequests(), before.all + 2);
  });

  // Last: the user stays disabled for the rest of this provider's life.
  test('disableUser: refresh answers 400 invalid_grant, the password is refused, the provider session signs in again', async () => {
    const { tokens, jar } = await signIn(idp, landing, CLIENT, USER, OFFLINE);
    idp.disableUser(USER.sub);
    assert.throws(() => idp.setUserGroups(USER.sub, []), /no user demo-user/);

    const refused = await refresh(idp, CLIENT, tokens['refresh_token']);
    assert.equal(refused.status, 400);
    assert.equal(refused.body['error'], 'invalid_grant');
    assert.match(String(refused.body['error_description']), /grant request is invalid/);

    const authorize = `${idp.issuer}/auth?${new URLSearchParams({ client_id: CLIENT.clientId, response_type: 'code', scope: 'openid', redirect_uri: landing.callbackUrl, code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' })}`;
    const inSession = await browse(authorize, jar, undefined, landing.origin);
    assert.equal(inSession.status, 200);
    assert.match(inSession.body, /id="login-form"/, 'the session of a disabled account shows the login form');
    assert.doesNotMatch(inSession.body, /user@example\.com/, 'nor offers the disabled account');

    const again = await browse(authorize, new CookieJar(), { email: USER.email, password: USER.password }, landing.origin);
    assert.equal(again.status, 200);
    assert.match(again.body, /id="login-error"[^>]*>Invalid email or password\./);
    assert.deepEqual(DEMO_USERS.map((u) => u.sub), ['demo-admin', 'demo-user'], 'the shared DEMO_USERS are not changed');
  });
});

/** One POST a relying party's back-channel logout endpoint received. */
interface LogoutDelivery {
  path: string;
  contentType: string;
  form: URLSearchParams;
}

/** A relying party's `backchannel_logout_uri`s (any path): records each POST, answers `status` (200 unless set). */
async function startLogoutReceiver(): Promise<{ origin: string; deliveries: Recorder<LogoutDelivery>; status: number; close(): Promise<void> }> {
  const deliveries = new Recorder<LogoutDelivery>();
  const receiver = { origin: '', deliveries, status: 200, close: () => closeServer(server) };
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
    return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
  };
  const server = createServer((req, res) => {
    void read(req).then((form) => {
      deliveries.listener({ path: req.url ?? '', contentType: String(req.headers['content-type']), form });
      res.writeHead(receiver.status).end();
    });
  });
  receiver.origin = `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}`;
  return receiver;
}

describe('identity provider back-channel logout', () => {
  const SIDLESS = { clientId: 'fixture-sidless-rp', clientSecret: 'sidless-secret' };
  const EVENT = 'http://schemas.openid.net/event/backchannel-logout';
  let landing: Awaited<ReturnType<typeof startLandingPage>>;
  let receiver: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let idp: IdentityProvider;

  before(async () => {
    landing = await startLandingPage();
    receiver = await startLogoutReceiver();
    const registered = { redirectUris: [landing.callbackUrl], postLogoutRedirectUris: [landing.loggedOutUrl] };
    idp = await startIdentityProvider({
      clients: [
        { ...CLIENT, ...registered, backchannelLogoutUri: `${receiver.origin}/backchannel/${CLIENT.clientId}` },
        { ...SIDLESS, ...registered, backchannelLogoutUri: `${receiver.origin}/backchannel/${SIDLESS.clientId}`, backchannelLogoutSessionRequired: false },
      ],
    });
  });
  after(async () => {
    await idp.close();
    await receiver.close();
    await landing.close();
  });

  /** The logout token of the next delivery to `clientId`'s endpoint after `seen` deliveries. */
  const nextLogoutToken = async (clientId: string, seen: number) => {
    const delivery = await receiver.deliveries.next((d) => d.path === `/backchannel/${clientId}` && receiver.deliveries.values.indexOf(d) >= seen);
    assert.equal(delivery.contentType, 'application/x-www-form-urlencoded');
    return String(delivery.form.get('logout_token'));
  };

  test('discovery announces back-channel logout; a session-required client gets sid in its ID tokens, the other none', async () => {
    const doc = await discovery(idp);
    assert.equal(doc['backchannel_logout_supported'], true);
    assert.equal(doc['backchannel_logout_session_supported'], true);
    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, 'openid profile');
    assert.equal(typeof (await verifiedIdToken(idp, tokens['id_token'], CLIENT.clientId))['sid'], 'string');
    const { tokens: sidless } = await signIn(idp, landing, SIDLESS, ADMIN, 'openid profile');
    assert.equal((await verifiedIdToken(idp, sidless['id_token'], SIDLESS.clientId))['sid'], undefined);
  });

  test('backchannelLogout POSTs logout_token=<JWT>: logout+jwt, events, sub, the sign-in sid, jti, iat, aud, iss, no nonce', async () => {
    const { tokens } = await signIn(idp, landing, CLIENT, ADMIN, 'openid profile');
    const { sid } = await verifiedIdToken(idp, tokens['id_token'], CLIENT.clientId);
    const seen = receiver.deliveries.values.length;
    await idp.backchannelLogout(ADMIN.sub, { clientId: CLIENT.clientId });

    const logoutToken = await nextLogoutToken(CLIENT.clientId, seen);
    const header = decodeProtectedHeader(logoutToken);
    assert.equal(header.typ, 'logout+jwt');
    assert.equal(header.alg, 'RS256');
    assert.equal(header.kid, idp.signingKid);
    const claims = await verifiedIdToken(idp, logoutToken, CLIENT.clientId);
    assert.deepEqual(claims['events'], { [EVENT]: {} });
    assert.equal(claims['sub'], ADMIN.sub);
    assert.equal(claims['sid'], sid);
    assert.equal(typeof claims['jti'], 'string');
    assert.equal(typeof claims['iat'], 'number');
    assert.equal(claims['aud'], CLIENT.clientId);
    assert.equal(claims['iss'], idp.issuer);
    assert.equal(claims['nonce'], undefined);
  });

  test('without a clientId every client with a URI gets one; a client not session-required gets no sid', async () => {
    await signIn(idp, landing, CLIENT, USER, 'openid');
    const seen = receiver.deliveries.values.length;
    await idp.backchannelLogout(USER.sub);
    assert.equal(decodeJwt(await nextLogoutToken(CLIENT.clientId, seen))['sub'], USER.sub);
    const sidless = decodeJwt(await nextLogoutToken(SIDLESS.clientId, seen));
    assert.equal(sidless['sub'], USER.sub);
    assert.equal(sidless['sid'], undefined);
  });

  test('backchannelLogout rejects when the relying party does not answer 200', async () => {
    receiver.status = 500;
    try {
      await assert.rejects(idp.backchannelLogout(ADMIN.sub, { clientId: CLIENT.clientId, sid: 'some-sid' }), /expected 200 OK .*got: 500/);
    } finally {
      receiver.status = 200;
    }
  });

  test("RP-initiated logout at the provider sends a logout token with the session's sid", async () => {
    const { tokens, jar } = await signIn(idp, landing, CLIENT, ADMIN, 'openid profile');
    const { sid } = await verifiedIdToken(idp, tokens['id_token'], CLIENT.clientId);
    const seen = receiver.deliveries.values.length;
    const endSession = `${idp.issuer}/session/end?${new URLSearchParams({ id_token_hint: String(tokens['id_token']), post_logout_redirect_uri: landing.loggedOutUrl })}`;
    const out = await browse(endSession, jar, undefined, landing.origin);
    assert.equal(out.url, landing.loggedOutUrl);

    const claims = decodeJwt(await nextLogoutToken(CLIENT.clientId, seen));
    assert.equal(claims['sub'], ADMIN.sub);
    assert.equal(claims['sid'], sid);
  });

  test('signLogoutToken signs the claims as given with the current key', async () => {
    const claims = { iss: idp.issuer, aud: 'another-client', sub: ADMIN.sub, iat: Math.floor(Date.now() / 1000), jti: 'j1', nonce: 'n' };
    const token = await idp.signLogoutToken(claims);
    const header = decodeProtectedHeader(token);
    assert.deepEqual(header, { typ: 'logout+jwt', kid: idp.signingKid, alg: 'RS256' });
    assert.deepEqual(await verifiedIdToken(idp, token, 'another-client'), claims);
    assert.equal(decodeProtectedHeader(await idp.signLogoutToken(claims, { typ: 'JWT' })).typ, 'JWT');
  });
});
