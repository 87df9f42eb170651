/**
 * design.md §3.7: a cookie an app sets without `Path` is scoped by the browser to the request's
 * default path (RFC 6265 §5.1.4), `/` for a request to `/a`, so it reached every other service.
 * The gateway now gives it `Path=<prefix>` (in Chromium: test/browser/prefix-apps.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CookieJar } from '../support/cookie-jar.js';
import { startCookieSettingApp, type CookieSettingApp } from '../support/cookie-setting-app.js';
import { service } from '../support/samples.js';
import { headerValues, startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

describe('cookie scope: an app cookie without Path stays with its service', () => {
  let app: CookieSettingApp;
  let other: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    [app, other] = await Promise.all([startCookieSettingApp('A'), startEchoUpstream()]);
    gateway = await startDataPlane({
      services: [service({ path: '/a', targetUrl: app.origin }), service({ path: '/b', targetUrl: other.origin })],
    });
  });
  after(async () => {
    await gateway.close();
    await Promise.all([app.close(), other.close()]);
  });

  /** A request through the gateway that carries `jar`'s cookies and stores what it sets. */
  async function browse(jar: CookieJar, target: string, method: 'GET' | 'POST' = 'GET') {
    const url = `${gateway.origin}${target}`;
    const cookie = jar.header(url, { method });
    const response = await gateway.fetch(target, { method, headers: cookie ? { cookie } : {} });
    jar.store(response.headers['set-cookie'] as string | string[] | undefined, url);
    return response;
  }

  it("gives the Express app's Path-less cookie the service's prefix", async () => {
    assert.equal((await gateway.fetch('/a/')).headers['set-cookie'], 'visited=A; Path=/a');
    assert.equal((await gateway.fetch('/a', { method: 'POST' })).headers['set-cookie'], 'visited=A; Path=/a');
  });

  it('a browser sends it back to its own service and never to another', async () => {
    const jar = new CookieJar();
    // POST /a: without Path, the default path of /a is /, which every service shares.
    assert.equal((await browse(jar, '/a', 'POST')).status, 200);
    assert.deepEqual(jar.all().map((cookie) => cookie.path), ['/a']);
    assert.equal((await browse(jar, '/a/cookies')).text, 'visited=A');
    const atB = (await browse(jar, '/b/page')).json<Echo>();
    assert.deepEqual(headerValues(atB, 'cookie'), [], 'the cookie of /a does not reach /b');
  });
});
