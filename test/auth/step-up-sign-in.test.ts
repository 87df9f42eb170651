/**
 * Step-up sign-in end to end (design.md §4.18), embedded and split, against the real provider: a
 * session older than a service's `maxAge` or of another `acr` is sent to sign in again with
 * `max_age` / `acr_values` and comes back to its page in the same session; `maxAge: 0` asks
 * `prompt=login`; an ID token short of what was asked is a 403 page; a rule's step-up holds on its
 * paths only; bearer tokens get RFC 9470's 401; a forged sign-in link asking for less gets nowhere.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { browse, CookieJar, type BrowseResult } from '../support/browserless-login.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { eventually } from '../support/eventually.js';
import { startStepUpTopology, STRONG_CLIENT, WEAK_CLIENT, type StepUpTopology } from '../support/step-up-topologies.js';

const USER = DEMO_USERS.find((user) => user.sub === 'demo-user')!;
const credentials = { email: USER.email, password: USER.password };
const HOUR_MS = 3_600_000;

/** A GET as a browser navigates (accepting HTML) with `jar`'s cookies: status, Location, body. */
async function navigate(url: string, jar: CookieJar): Promise<{ status: number; location: string | undefined; body: string }> {
  const response = await request(url, { headers: { accept: 'text/html', cookie: jar.header(url, { method: 'GET' }) } });
  const location = response.headers.location;
  return { status: response.statusCode, location: typeof location === 'string' ? location : undefined, body: await response.body.text() };
}

for (const topology of ['embedded', 'split'] as const) {
  describe(`step-up sign-in (${topology})`, () => {
    let t: StepUpTopology;
    before(async () => {
      t = await startStepUpTopology(topology);
      await t.createService({ name: 'Recent', path: '/recent', maxAge: 300 });
      await t.createService({ name: 'Fresh', path: '/fresh', maxAge: 0 });
      await t.createService({ name: 'Strong', path: '/strong', acr: ['mfa'] });
      await t.createService({ name: 'Billing', path: '/billing', rules: [{ paths: ['/admin'], action: 'require', maxAge: 300 }] });
    });
    after(() => t?.close());

    /**
     * Signs `USER` in through the provider from `path` in a new browser; resolves with its jar, its
     * session's handle and the handles of all `USER`'s sessions then (earlier tests' included).
     */
    async function signedIn(path: string): Promise<{ jar: CookieJar; handle: string; handles: string[] }> {
      const earlier = await t.sessionHandles(USER.sub);
      const jar = new CookieJar();
      const result = await browse(`${t.origin}/auth/login?returnTo=${encodeURIComponent(path)}`, jar, credentials);
      assert.equal(result.finalLocation, path);
      const handles = await t.sessionHandles(USER.sub);
      return { jar, handle: handles.find((handle) => !earlier.includes(handle))!, handles };
    }

    /** `USER`'s sessions, as a set (the API lists them newest first). */
    const sessionsOf = async () => new Set(await t.sessionHandles(USER.sub));

    /** Makes the session's sign-in an hour old. */
    const ageSignIn = (handle: string) => t.changeSession(handle, (s) => ({ ...s, user: { ...s.user, authTime: Date.now() - HOUR_MS } }));

    /** Follows a step-up redirect from the gateway through the provider and back; `password`: the provider asks for it. */
    const stepUp = (location: string, jar: CookieJar, password = false): Promise<BrowseResult> =>
      browse(new URL(location, t.origin).href, jar, password ? credentials : undefined, t.origin);

    it('a session older than maxAge is sent to sign in again and comes back to its page, in the same session', async () => {
      const { jar, handle, handles } = await signedIn('/recent/page');
      assert.equal((await navigate(`${t.origin}/recent/page`, jar)).status, 200, 'a new sign-in is recent enough');
      await ageSignIn(handle);
      await eventually('the aged session is stepped up', async () => (await navigate(`${t.origin}/recent/page?x=1`, jar)).status === 302);
      const asked = await navigate(`${t.origin}/recent/page?x=1`, jar);
      assert.equal(asked.location, `/auth/login?returnTo=${encodeURIComponent('/recent/page?x=1')}&max_age=300`);
      const back = await stepUp(asked.location!, jar);
      assert.equal(back.finalLocation, '/recent/page?x=1', 'back to the page');
      assert.equal(t.idp.authorizationRequests().at(-1)!.get('max_age'), '300', 'max_age reached the provider');
      const page = await navigate(`${t.origin}/recent/page?x=1`, jar);
      assert.equal(page.status, 200);
      assert.deepEqual(await sessionsOf(), new Set(handles), 'the same session, and no other');
    });

    it('maxAge 0 asks the provider for a new sign-in (prompt=login): the password again, then the page', async () => {
      const { jar, handle, handles } = await signedIn('/fresh/');
      await ageSignIn(handle);
      await eventually('stepped up', async () => (await navigate(`${t.origin}/fresh/`, jar)).status === 302);
      const asked = await navigate(`${t.origin}/fresh/`, jar);
      assert.match(asked.location!, /&max_age=0$/);
      const atProvider = await stepUp(asked.location!, jar);
      assert.match(atProvider.body, /name="password"/, 'the provider asks for the password, its session notwithstanding');
      const back = await stepUp(asked.location!, jar, true);
      const authorization = t.idp.authorizationRequests().at(-1)!;
      assert.deepEqual([authorization.get('prompt'), authorization.get('max_age')], ['login', '0']);
      assert.equal(back.finalLocation, '/fresh/');
      assert.equal((await navigate(`${t.origin}/fresh/`, jar)).status, 200);
      assert.deepEqual(await sessionsOf(), new Set(handles), 'no second session');
      assert.ok(handles.includes(handle));
    });

    it('a sign-in whose acr is not accepted gets the 403 page, not another redirect; one with it is forwarded', async () => {
      const { jar, handle, handles } = await signedIn('/strong/');
      const asked = await navigate(`${t.origin}/strong/`, jar);
      assert.equal(asked.location, `/auth/login?returnTo=%2Fstrong%2F&acr_values=mfa`, 'a pwd sign-in is stepped up');
      const refused = await stepUp(asked.location!, jar, true);
      assert.equal(refused.status, 403, 'the provider gave pwd again');
      assert.match(refused.body, /one of these authentication levels \(acr\): mfa/);
      assert.match(refused.body, /its acr is pwd, not one of mfa/);
      assert.equal(t.idp.authorizationRequests().at(-1)!.get('acr_values'), 'mfa');
      const before = t.upstream.requests.length;
      t.idp.nextSignIn({ acr: 'mfa', amr: ['pwd', 'otp'] });
      const back = await stepUp(asked.location!, jar, true);
      assert.equal(back.finalLocation, '/strong/');
      assert.equal((await navigate(`${t.origin}/strong/`, jar)).status, 200);
      assert.equal(t.upstream.requests.length, before + 1, 'forwarded once, after the step-up');
      assert.deepEqual(await sessionsOf(), new Set(handles), 'no second session');
      assert.ok(handles.includes(handle));
    });

    it("a rule's maxAge holds on its paths only; an API call gets 401 JSON", async () => {
      const { jar, handle } = await signedIn('/billing/');
      await ageSignIn(handle);
      await eventually('the rule steps the aged session up', async () => (await navigate(`${t.origin}/billing/admin/x`, jar)).status === 302);
      assert.equal((await navigate(`${t.origin}/billing/other`, jar)).status, 200, 'elsewhere any session');
      const api = await request(`${t.origin}/billing/admin/x`, { method: 'POST', headers: { accept: 'application/json', cookie: jar.header(t.origin, { method: 'GET' }) } });
      assert.equal(api.statusCode, 401);
      assert.deepEqual(await api.body.json(), { error: 'Step-up sign-in required' });
    });

    it('a forged sign-in link asking for less does not get through: the page asks again', async () => {
      const { jar } = await signedIn('/strong/x');
      const before = t.upstream.requests.length;
      const forged = await stepUp(`/auth/login?returnTo=${encodeURIComponent('/strong/x')}&acr_values=pwd`, jar);
      assert.equal(forged.finalLocation, '/strong/x', 'what the forged link asked was met');
      const page = await navigate(`${t.origin}/strong/x`, jar);
      assert.equal(page.status, 302, 'the data plane still asks for mfa');
      assert.match(page.location!, /acr_values=mfa$/);
      const older = await stepUp(`/auth/login?returnTo=${encodeURIComponent('/strong/x')}&max_age=99999`, jar);
      assert.equal(older.finalLocation, '/strong/x');
      assert.equal((await navigate(`${t.origin}/strong/x`, jar)).status, 302);
      assert.equal(t.upstream.requests.length, before, 'nothing forwarded');
    });

    it('bearer tokens: short of acr → 401 insufficient_user_authentication (RFC 9470); with it → forwarded', async () => {
      const weak = await request(`${t.origin}/strong/api`, { headers: { authorization: `Bearer ${await t.tokenOf(WEAK_CLIENT)}` } });
      assert.equal(weak.statusCode, 401);
      const challenge = String(weak.headers['www-authenticate']);
      assert.match(challenge, /^Bearer error="insufficient_user_authentication", error_description="[^"]+", acr_values="mfa"$/);
      await weak.body.dump();
      const strong = await request(`${t.origin}/strong/api`, { headers: { authorization: `Bearer ${await t.tokenOf(STRONG_CLIENT)}` } });
      assert.equal(strong.statusCode, 200);
      await strong.body.dump();
      const aged = await request(`${t.origin}/recent/api`, { headers: { authorization: `Bearer ${await t.tokenOf(WEAK_CLIENT)}` } });
      assert.equal(aged.statusCode, 401, 'a token without auth_time never meets a maxAge');
      assert.match(String(aged.headers['www-authenticate']), /max_age="300"/);
      await aged.body.dump();
    });
  });
}
