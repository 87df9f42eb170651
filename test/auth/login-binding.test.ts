/**
 * design.md §4.1: a login is bound to the browser that started it. The `state` travels in URLs, so a
 * leaked, still unused callback URL (Referer, proxy logs, a screenshot) must not sign its holder in
 * as the victim, and must not spoil the victim's own login either.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { browse, CookieJar } from '../support/browserless-login.js';
import { DEMO_USERS } from '../support/identity-provider.js';
import { startGatewayWithProvider, type GatewayWithProvider } from '../support/gateway-with-provider.js';

let env: GatewayWithProvider;
const victim = DEMO_USERS.find((user) => user.email === 'admin@example.com')!;

before(async () => {
  // Query response mode: the callback is a URL that can leak, which is what this file is about.
  env = await startGatewayWithProvider({}, { responseModes: 'query-only' });
});
after(() => env.close());

/** Starts a login in `jar`'s browser; returns the authorization URL. */
async function startLogin(jar: CookieJar, returnTo: string): Promise<string> {
  const url = `${env.gw.origin}/auth/login?returnTo=${encodeURIComponent(returnTo)}`;
  const response = await request(url, { headers: { cookie: jar.header(url, { method: 'GET' }) } });
  jar.store(response.headers['set-cookie'], url);
  await response.body.dump();
  return String(response.headers.location);
}

test('the transaction cookie holds a key of its own, never the state that URLs carry', async () => {
  const jar = new CookieJar();
  const authorization = new URL(await startLogin(jar, '/'));
  const key = jar.get('gw_oidc', env.gw.origin)!;
  assert.match(key, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(!authorization.href.includes(key), 'the key is not in the authorization request');
  assert.notEqual(key, authorization.searchParams.get('state'));
});

test('a leaked unused callback URL signs nobody in elsewhere, and its owner can still finish', async () => {
  const owner = new CookieJar();
  const authorization = await startLogin(owner, '/mine');

  // Someone else's browser completes the provider's steps and arrives with the callback URL.
  const holder = new CookieJar();
  const stolen = await browse(authorization, holder, { email: victim.email, password: victim.password }, env.gw.origin);
  const callbackUrl = new URL(stolen.url);
  assert.equal(callbackUrl.pathname, '/auth/callback');
  assert.ok(callbackUrl.searchParams.get('code'), 'the walk ended at the callback with a code');
  assert.equal(stolen.status, 400);
  assert.match(stolen.body, /does not belong to this browser/);
  assert.equal(holder.get('gw_session', env.gw.origin), undefined, 'no session for the holder');

  // A forged transaction cookie of the right shape is no better.
  const forged = await request(callbackUrl, { headers: { cookie: `gw_oidc=${'A'.repeat(43)}` } });
  assert.equal(forged.statusCode, 400);
  assert.doesNotMatch(String(forged.headers['set-cookie'] ?? ''), /gw_session=/);
  await forged.body.dump();

  // The owner's browser, with its key, finishes the same login.
  const finished = await request(callbackUrl, { headers: { cookie: owner.header(callbackUrl.href, { method: 'GET' }) } });
  assert.equal(finished.statusCode, 302, await finished.body.text());
  assert.equal(finished.headers.location, '/mine');
  assert.match(String(finished.headers['set-cookie']), /^gw_session=[A-Za-z0-9_-]+;/);

  // And once used, it is gone, for everyone.
  const replay = await request(callbackUrl, { headers: { cookie: owner.header(callbackUrl.href, { method: 'GET' }) } });
  assert.equal(replay.statusCode, 400);
  assert.match(await replay.body.text(), /expired or was already used/);
});
