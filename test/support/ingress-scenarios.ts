/**
 * The verify endpoint behind a real ingress (design.md §4.19), the same scenarios for each:
 * a browser's sign-in round trip through the ingress with the real identity provider, the
 * upstream then reached with the identity fields; a refused user; a client's own identity and
 * original-request fields; every spelling of a denied path. The gateway trusts the ingress
 * (TRUST_PROXY=127.0.0.1) and PUBLIC_URL is the ingress's origin.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { CookieJar, loginThroughProvider } from './browserless-login.js';
import { DEMO_USERS } from './identity-provider.js';
import { freePort } from './free-port.js';
import { startGatewayWithProvider, type GatewayWithProvider } from './gateway-with-provider.js';
import type { Ingress, IngressStarter } from './ingress-servers.js';
import { rawRequest } from './raw-connection.js';
import { signIn } from './sessions.js';
import { createService } from './api-client.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from './upstream.js';

const [ADMIN, USER] = DEMO_USERS as [(typeof DEMO_USERS)[0], (typeof DEMO_USERS)[0]];

/** Spellings of `/app/internal`, which a `deny` rule closes, that some upstream reads as it. */
export const DENIED_SPELLINGS = ['/app/internal', '/app/INTERNAL', '/App/internal', '/app/%69nternal', '/app//internal', '/app/internal;x=1', '/app/internal/', '/app%2Finternal', '/app/%2Finternal', '/app\\internal'];

/** Registers the scenarios' tests for the ingress `start` starts. */
export function describeIngress(name: string, start: IngressStarter): void {
  describe(`Gatehouse as ${name}'s auth decision`, () => {
    let upstream: EchoUpstream;
    let gwp: GatewayWithProvider;
    let ingress: Ingress;
    /** A session of user@example.com, made in the store (the round trip test signs in for real). */
    let userCookie: string;

    before(async () => {
      upstream = await startEchoUpstream();
      const port = await freePort();
      gwp = await startGatewayWithProvider({ PUBLIC_URL: `http://127.0.0.1:${port}`, TRUST_PROXY: '127.0.0.1' });
      const gateway = new URL(gwp.gw.origin).host;
      const admin = await signIn(gwp.gw);
      const target = upstream.origin;
      await createService(gwp.gw.adminUrl, admin, { name: 'App', path: '/app', targetUrl: target, rules: [{ paths: ['/internal'], action: 'deny' }] });
      await createService(gwp.gw.adminUrl, admin, { name: 'Team', path: '/team', targetUrl: target, access: { emails: [ADMIN.email] } });
      await createService(gwp.gw.adminUrl, admin, { name: 'Open', path: '/open', targetUrl: target, requireAuth: false });
      userCookie = (await signIn(gwp.gw, { sub: USER.sub, email: USER.email, isAdmin: false })).cookie;
      ingress = await start({ port, gateway, upstream: new URL(target).host });
    });
    after(async () => {
      await ingress?.stop();
      await gwp?.close();
      await upstream?.close();
    });

    /** GET `path` through the ingress as a browser would ask. */
    const get = (path: string, headers: Record<string, string> = {}) =>
      request(`${ingress.origin}${path}`, { headers: { accept: 'text/html', ...headers } });
    /** The requests the upstream got whose target mentions `word` (any case). */
    const reached = (word: string) => upstream.requests.filter((r) => r.url.toLowerCase().includes(word));

    it('sends an anonymous browser to sign in and back to the page, which the upstream serves with the identity fields', async () => {
      const first = await get('/app/page?x=1');
      await first.body.dump();
      assert.equal(first.statusCode, 302, ingress.output());
      const location = String(first.headers.location);
      assert.equal(location, `${ingress.origin}/auth/login?returnTo=${encodeURIComponent('/app/page?x=1')}`);
      const jar = new CookieJar();
      const signedIn = await loginThroughProvider({ loginUrl: location, email: USER.email, password: USER.password, jar });
      assert.equal(signedIn.finalLocation, '/app/page?x=1');
      const page = await get(signedIn.finalLocation, { cookie: jar.header(`${ingress.origin}/app/page`, { method: 'GET' }) });
      const received = (await page.body.json()) as Echo;
      assert.equal(page.statusCode, 200);
      assert.equal(received.url, '/app/page?x=1');
      assert.deepEqual(headerValues(received, 'x-forwarded-user'), [USER.sub]);
      assert.deepEqual(headerValues(received, 'x-forwarded-email'), [USER.email]);
      assert.match(headerValues(received, 'x-gatehouse-assertion')[0] ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/);
    });

    it("answers 403 to a signed-in user the service's access policy refuses; the upstream is never asked", async () => {
      const res = await get('/team/x', { cookie: userCookie });
      await res.body.dump();
      assert.equal(res.statusCode, 403);
      assert.deepEqual(reached('/team'), []);
    });

    it("never lets a client's own identity fields reach the upstream", async () => {
      const spoofed = { 'x-forwarded-user': 'demo-admin', 'x-forwarded-email': ADMIN.email, 'x-gatehouse-assertion': 'forged.forged.forged' };
      const anonymous = await get('/open/spoof', spoofed);
      const signedIn = await get('/app/spoof', { ...spoofed, cookie: userCookie });
      for (const res of [anonymous, signedIn]) assert.equal(res.statusCode, 200);
      const [open, app] = [(await anonymous.body.json()) as Echo, (await signedIn.body.json()) as Echo];
      assert.deepEqual(headerValues(open, 'x-forwarded-user'), []);
      assert.deepEqual(headerValues(open, 'x-gatehouse-assertion'), []);
      assert.deepEqual(headerValues(app, 'x-forwarded-user'), [USER.sub]);
      assert.deepEqual(headerValues(app, 'x-forwarded-email'), [USER.email]);
      assert.notEqual(headerValues(app, 'x-gatehouse-assertion')[0], 'forged.forged.forged');
    });

    it('refuses every spelling of a denied path, and the upstream never sees one', async () => {
      for (const spelling of DENIED_SPELLINGS) {
        const res = await rawRequest(ingress.port, `GET ${spelling} HTTP/1.1\r\nHost: 127.0.0.1:${ingress.port}\r\nCookie: ${userCookie}\r\nConnection: close\r\n\r\n`);
        assert.equal(res.status, 403, spelling);
      }
      assert.deepEqual(reached('nternal'), []);
    });

    it('cannot be made to ask about another path by original-request fields the client adds', async () => {
      const res = await get('/app/internal', { cookie: userCookie, 'x-forwarded-uri': '/app/page', 'x-original-uri': '/app/page', 'x-forwarded-method': 'GET' });
      await res.body.dump();
      assert.ok(res.statusCode >= 400, String(res.statusCode));
      assert.deepEqual(reached('nternal'), []);
    });
  });
}
