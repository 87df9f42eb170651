/**
 * design.md §4.19 in split mode: each proxy process answers `/auth/verify` itself (it is not
 * handed to the admin process, which has no such route), from the registry and sessions it reads
 * from Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import type { SignedIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

describe('GET /auth/verify in split mode', () => {
  let split: SplitGateway;
  let upstream: EchoUpstream;
  let user: SignedIn;

  before(async () => {
    upstream = await startEchoUpstream();
    split = await startSplitGateway({ TRUST_PROXY: '127.0.0.1' });
    const admin = await split.signIn();
    user = await split.signIn({ sub: 'user-sub', email: 'user@example.com', isAdmin: false });
    await split.createService(admin, { name: 'App', path: '/app', targetUrl: upstream.origin, rules: [{ paths: ['/internal'], action: 'deny' }] });
  });
  after(async () => {
    await split?.close();
    await upstream?.close();
  });

  /** Asks `proxy`'s verify endpoint about `uri`, with `cookie` when given. */
  const verify = (proxy: string, uri: string, cookie?: string) =>
    request(`${proxy}/auth/verify`, { headers: { 'x-forwarded-uri': uri, ...(cookie ? { cookie } : {}) } });

  it('answers from every proxy process: 401 with the sign-in, 200 with the identity fields, 403 for a deny rule', async () => {
    for (const { url } of split.proxies) {
      const anonymous = await verify(url, '/app/page');
      await anonymous.body.dump();
      assert.equal(anonymous.statusCode, 401);
      assert.equal(anonymous.headers.location, `${split.env.PUBLIC_URL}/auth/login?returnTo=${encodeURIComponent('/app/page')}`);
      const allowed = await verify(url, '/app/page', user.cookie);
      await allowed.body.dump();
      assert.equal(allowed.statusCode, 200);
      assert.equal(allowed.headers['x-forwarded-user'], 'user-sub');
      assert.match(String(allowed.headers['x-gatehouse-assertion']), /^[\w-]+\.[\w-]+\.[\w-]+$/);
      const denied = await verify(url, '/APP/%69nternal', user.cookie);
      await denied.body.dump();
      assert.equal(denied.statusCode, 403);
    }
    assert.deepEqual(upstream.requests, []);
  });
});
