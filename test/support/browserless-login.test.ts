/**
 * The browserless login driver (test/support/browserless-login.ts) end to end against the real test
 * identity provider and a tiny openid-client relying party: form_post and query response modes,
 * a wrong password, single sign-on with a kept jar, and a cross-site (localhost ↔ 127.0.0.1) login.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CookieJar, loginThroughProvider } from './browserless-login.js';
import { DEMO_USERS, startIdentityProvider, type IdentityProvider } from './identity-provider.js';
import { startTestRelyingParty, type TestRelyingParty } from './openid-relying-party.js';

const [ADMIN, USER] = DEMO_USERS;
if (ADMIN === undefined || USER === undefined) throw new Error('DEMO_USERS needs two users');

describe('loginThroughProvider', () => {
  let rp: TestRelyingParty;
  let crossSiteRp: TestRelyingParty;
  let idp: IdentityProvider;

  before(async () => {
    rp = await startTestRelyingParty();
    crossSiteRp = await startTestRelyingParty({ hostname: 'localhost' });
    idp = await startIdentityProvider({
      clients: [
        { clientId: 'confidential', clientSecret: 'shh', redirectUris: [rp.callbackUrl], postLogoutRedirectUris: [rp.loggedOutUrl] },
        { clientId: 'public', redirectUris: [rp.callbackUrl, crossSiteRp.callbackUrl], postLogoutRedirectUris: [] },
      ],
    });
  });
  after(async () => {
    await idp.close();
    await rp.close();
    await crossSiteRp.close();
  });

  test('form_post: fills login and consent, re-POSTs the form_post page, ends at the callback 302', async () => {
    await rp.connect({ issuer: idp.issuer, clientId: 'confidential', clientSecret: 'shh', responseMode: 'form_post', nonRepudiation: true });
    const result = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password });
    assert.equal(result.status, 302);
    assert.equal(result.finalLocation, '/welcome');
    assert.equal(new URL(result.url).pathname, '/callback');
    const last = rp.results.at(-1);
    assert.ok(last?.ok);
    assert.equal(last.method, 'POST');
    assert.equal(last.claims.sub, ADMIN.sub);
  });

  test('query: the callback is a GET with code and state in the URL', async () => {
    await rp.connect({ issuer: idp.issuer, clientId: 'public', responseMode: 'query', nonRepudiation: true });
    const result = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: USER.email, password: USER.password });
    assert.equal(result.finalLocation, '/welcome');
    const callback = new URL(result.url);
    assert.equal(callback.pathname, '/callback');
    assert.ok(callback.searchParams.get('code'));
    assert.ok(callback.searchParams.get('state'));
    const last = rp.results.at(-1);
    assert.ok(last?.ok);
    assert.equal(last.method, 'GET');
    assert.equal(last.claims.sub, USER.sub);
    assert.deepEqual(last.claims['groups'], USER.groups);
  });

  test('a wrong password ends on the login form with its error, and the relying party sees no callback', async () => {
    await rp.connect({ issuer: idp.issuer, clientId: 'confidential', clientSecret: 'shh', responseMode: 'form_post' });
    const callbacksBefore = rp.results.length;
    const result = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: 'guess' });
    assert.equal(result.status, 200);
    assert.equal(result.finalLocation, null);
    assert.match(result.url, /\/interaction\/[\w-]+\/login$/);
    assert.match(result.body, /id="login-error"/);
    assert.equal(rp.results.length, callbacksBefore);
  });

  test('a kept jar signs in again without forms (IdP session and grant remembered)', async () => {
    await rp.connect({ issuer: idp.issuer, clientId: 'confidential', clientSecret: 'shh', responseMode: 'form_post' });
    const jar = new CookieJar();
    const first = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: ADMIN.password, jar });
    assert.equal(first.finalLocation, '/welcome');
    // A wrong password would fail if the login form were shown: reaching /welcome proves single sign-on.
    const second = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: 'unused', jar });
    assert.equal(second.finalLocation, '/welcome');
    assert.equal(second.jar, jar);
    const fresh = await loginThroughProvider({ loginUrl: `${rp.url}/login`, email: ADMIN.email, password: 'unused' });
    assert.equal(fresh.finalLocation, null, 'a fresh jar has no IdP session');
  });

  test('cross-site: a relying party on localhost, the provider on 127.0.0.1, form_post', async () => {
    await crossSiteRp.connect({ issuer: idp.issuer, clientId: 'public', responseMode: 'form_post', nonRepudiation: true });
    const result = await loginThroughProvider({ loginUrl: `${crossSiteRp.url}/login`, email: ADMIN.email, password: ADMIN.password });
    assert.equal(result.finalLocation, '/welcome');
    assert.match(result.url, /^http:\/\/localhost:\d+\/callback$/);
    assert.equal(crossSiteRp.results.at(-1)?.ok, true);
  });
});
