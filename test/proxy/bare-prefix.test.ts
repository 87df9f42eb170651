/**
 * design.md §3.5 and §5 "bare prefix": `GET /spa` forwarded as the target's `/` gave the app's
 * index page a URL whose relative links (`app.js`) left the service. GET and HEAD of exactly a
 * prefix now get 308 to the prefix plus `/` (the page in a browser: test/browser/prefix-apps.test.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { service } from '../support/samples.js';
import type { Echo } from '../support/upstream.js';
import { useEchoDataPlane } from '../support/echo-data-plane.js';

describe('bare prefix: GET and HEAD of exactly a prefix are redirected to the prefix plus /', () => {
  const env = useEchoDataPlane((origin) => ({
    services: [
      service({ path: '/spa', targetUrl: `${origin}/base` }),
      service({ path: '/Docs', targetUrl: origin }),
      service({ path: '/team/app', targetUrl: origin }),
      service({ path: '/priv', targetUrl: origin, requireAuth: true }),
      service({ path: '/off', targetUrl: origin, enabled: false }),
      service({ path: '/', targetUrl: `${origin}/root` }),
    ],
  }));

  /** The `Location` of a 308 for `target`, asserting the status and that nothing reached the target. */
  async function redirectFor(target: string, method: 'GET' | 'HEAD' = 'GET', cookie?: string): Promise<string> {
    const before = env.upstream.requests.length;
    const response = await env.gateway.fetch(target, { method, headers: cookie ? { cookie } : {} });
    assert.equal(response.status, 308, `${method} ${target}: ${response.text}`);
    assert.equal(response.text, '');
    assert.equal(env.upstream.requests.length, before, `${target} was not forwarded`);
    const location = String(response.headers.location);
    assert.doesNotMatch(location, /^[/\\]{2}/, `${target}: never a scheme-relative Location`);
    return location;
  }

  it('answers GET and HEAD with 308 to the prefix plus /, the query kept', async () => {
    assert.equal(await redirectFor('/spa'), '/spa/');
    assert.equal(await redirectFor('/spa?x=1&y=%20z'), '/spa/?x=1&y=%20z');
    assert.equal(await redirectFor('/spa?'), '/spa/?');
    assert.equal(await redirectFor('/spa', 'HEAD'), '/spa/');
    assert.equal(await redirectFor('/spa?q=1', 'HEAD'), '/spa/?q=1');
    assert.equal(await redirectFor('/team/app?a=b'), '/team/app/?a=b');
    const response = await env.gateway.fetch('/spa');
    assert.equal(response.headers['cache-control'], 'no-store', 'a browser must not keep it once the registry changes');
  });

  it('sends every spelling of a prefix to the path as registered', async () => {
    for (const [target, location] of [
      ['/SPA', '/spa/'],
      ['/%73pa', '/spa/'],
      ['/spa;jsessionid=1', '/spa/'],
      ['//spa', '/spa/'],
      ['/docs', '/Docs/'],
      ['/DOCS?v=2', '/Docs/?v=2'],
      ['/team//app', '/team/app/'],
      ['/team%2Fapp', '/team/app/'],
    ]) {
      assert.equal(await redirectFor(target!), location, target);
    }
  });

  it('forwards other methods to the base path, and the prefix plus / as always', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const response = await env.gateway.fetch('/spa?x=1', { method, body: 'x' });
      assert.equal(response.status, 200, method);
      assert.deepEqual([response.json<Echo>().method, response.json<Echo>().url], [method, '/base?x=1']);
    }
    assert.equal((await env.gateway.fetch('/spa/')).json<Echo>().url, '/base/');
    assert.equal((await env.gateway.fetch('/spa/?x=1')).json<Echo>().url, '/base/?x=1');
    assert.equal((await env.gateway.fetch('/spa/app.js')).json<Echo>().url, '/base/app.js');
    assert.equal((await env.gateway.fetch('/team/app/')).json<Echo>().url, '/');
  });

  it('does not redirect / (the service at /)', async () => {
    const response = await env.gateway.fetch('/?x=1');
    assert.equal(response.status, 200);
    assert.equal(response.json<Echo>().url, '/root/?x=1');
  });

  it("answers a service's checks first: 401 without a session, 503 when disabled, 308 with a session", async () => {
    const anonymous = await env.gateway.fetch('/priv', { headers: { accept: 'application/json' } });
    assert.equal(anonymous.status, 401);
    assert.equal((await env.gateway.fetch('/off')).status, 503);
    const cookie = await env.gateway.signIn({ sub: 'redirected-user' });
    assert.equal(await redirectFor('/priv?who=1', 'GET', cookie), '/priv/?who=1');
  });

  it('access-logs the redirect with its status and user, like every other outcome', async () => {
    const cookie = await env.gateway.signIn({ sub: 'logged-redirect' });
    await redirectFor('/priv?logged=1', 'GET', cookie);
    const record = await env.gateway.waitForRecord((entry) => entry.path === '/priv?logged=1');
    assert.equal(record.statusCode, 308);
    assert.equal(record.userId, 'logged-redirect');
    assert.equal(record.method, 'GET');
  });
});
