import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { service } from '../support/samples.js';
import { headerValues, type Echo } from '../support/upstream.js';
import { useEchoDataPlane } from '../support/echo-data-plane.js';

describe('authentication on protected and public services', () => {
  const env = useEchoDataPlane((origin) => ({
    services: [
      service({ path: '/private', targetUrl: origin, requireAuth: true }),
      service({ path: '/public', targetUrl: origin, requireAuth: false }),
    ],
  }));

  it('answers 401 Not authenticated as JSON without a session, and forwards nothing', async () => {
    const before = env.upstream.requests.length;
    const response = await env.gateway.fetch('/private/data', { headers: { accept: 'application/json' } });
    assert.equal(response.status, 401);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assert.deepEqual(response.json(), { error: 'Not authenticated' });
    assert.equal((await env.gateway.fetch('/private')).status, 401);
    assert.equal(env.upstream.requests.length, before);
  });

  it('answers a browser with a 401 HTML page linking to the login with the original path and query', async () => {
    const response = await env.gateway.fetch('/private/a/b?x=1&y=%C3%A9', {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    assert.equal(response.status, 401);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const href = /id="login" href="([^"]+)"/.exec(response.text)?.[1];
    assert.equal(href, `/auth/login?returnTo=${encodeURIComponent('/private/a/b?x=1&y=%C3%A9')}`);
    const returnTo = new URL(href!, 'http://gateway').searchParams.get('returnTo');
    assert.equal(returnTo, '/private/a/b?x=1&y=%C3%A9');
    assert.match(response.text, /<title>Sign in required · Gatehouse<\/title>/, "the gateway pages' layout");
    assert.match(response.text, /<a class="brand" href="\/">Gatehouse<\/a>/);
  });

  it('rejects unknown, malformed and expired sessions', async () => {
    const expired = await env.gateway.signIn();
    env.gateway.db.prepare('UPDATE sessions SET expires_at = ?').run(Date.now() - 1);
    for (const cookie of ['gw_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'gw_session=short', expired, 'other=1']) {
      assert.equal((await env.gateway.fetch('/private/x', { headers: { cookie } })).status, 401, cookie);
    }
  });

  it('forwards a request with a valid session, passing X-Forwarded-User and X-Forwarded-Email', async () => {
    const cookie = await env.gateway.signIn({ sub: 'sub-42', email: 'grace@example.com' });
    const response = await env.gateway.fetch('/private/x', { headers: { cookie } });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), ['sub-42']);
    assert.deepEqual(headerValues(received, 'x-forwarded-email'), ['grace@example.com']);
    assert.deepEqual(headerValues(received, 'cookie'), [], 'the session cookie is not forwarded');
  });

  it('passes an internationalised email as UTF-8 and never a control character', async () => {
    const cookie = await env.gateway.signIn({ sub: 'line\r\nX-Injected: 1', email: 'zoë@exämple.com' });
    const response = await env.gateway.fetch('/private/x', { headers: { cookie } });
    assert.equal(response.status, 200);
    const received = response.json<Echo>();
    assert.deepEqual(headerValues(received, 'x-forwarded-user'), ['lineX-Injected: 1']);
    assert.deepEqual(headerValues(received, 'x-injected'), []);
    const email = headerValues(received, 'x-forwarded-email')[0]!;
    assert.equal(Buffer.from(email, 'latin1').toString('utf8'), 'zoë@exämple.com');
  });

  it('passes identity to a public service when a valid session is present, and none without', async () => {
    const cookie = await env.gateway.signIn({ sub: 'sub-7', email: 'linus@example.com' });
    const signedIn = (await env.gateway.fetch('/public/x', { headers: { cookie } })).json<Echo>();
    assert.deepEqual(headerValues(signedIn, 'x-forwarded-user'), ['sub-7']);
    assert.deepEqual(headerValues(signedIn, 'x-forwarded-email'), ['linus@example.com']);
    const anonymous = (await env.gateway.fetch('/public/x')).json<Echo>();
    assert.deepEqual(headerValues(anonymous, 'x-forwarded-user'), []);
    assert.deepEqual(headerValues(anonymous, 'x-forwarded-email'), []);
  });
});

describe('authentication when the session store is down', () => {
  const env = useEchoDataPlane((origin) => ({
    services: [
      service({ path: '/private', targetUrl: origin, requireAuth: true }),
      service({ path: '/public', targetUrl: origin }),
    ],
  }));

  it('answers 503 on a protected service and serves a public one anonymously', async () => {
    const cookie = await env.gateway.signIn();
    env.gateway.db.close(); // every read of the real store now fails
    const protectedResponse = await env.gateway.fetch('/private/x', { headers: { cookie } });
    assert.equal(protectedResponse.status, 503);
    assert.deepEqual(protectedResponse.json(), { error: 'Session store unavailable' });
    const publicResponse = await env.gateway.fetch('/public/x', { headers: { cookie } });
    assert.equal(publicResponse.status, 200);
    assert.deepEqual(headerValues(publicResponse.json<Echo>(), 'x-forwarded-user'), []);
    // Without a cookie there is nothing to look up: the protected service answers 401 as usual.
    assert.equal((await env.gateway.fetch('/private/x')).status, 401);
  });
});
