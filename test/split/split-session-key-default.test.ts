/**
 * Sessions are re-checked at the identity provider by default in the production topology (Redis,
 * one admin process, two proxy processes; README "Re-checks at the provider"): with no
 * SESSION_ENCRYPTION_KEY anywhere, the admin process seals refresh tokens with the key it made and
 * stored, and a user removed from a group at the provider gets 403 from both proxies within
 * SESSION_REVALIDATE. Embedded mode, restarts and the variable set later: test/admin/session-key-default.test.ts.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { DEMO_USERS, type DemoUser } from '../support/identity-provider.js';

const USER: DemoUser = { sub: 'split-default-key-sub', email: 'split-default-key@example.com', name: 'Split Default Key', password: 'split-default-key-password', groups: ['staff'] };

const env = useAdminSession(
  {
    topology: 'split',
    env: { OIDC_SCOPES: 'openid profile email offline_access', SESSION_REVALIDATE: '1s' },
    provider: { refreshTokens: true, users: [...DEMO_USERS, USER] },
    upstream: true,
  },
  async (env) => {
    await env.split.createService(env.admin, { name: 'Staff', path: '/staff', targetUrl: env.upstream.origin, requireAuth: true, access: { groups: ['staff'] } });
  },
);

function onBothProxies(cookie: string): Promise<number[]> {
  return Promise.all(env.split.proxies.map((proxy) => statusOf(`${proxy.url}/staff/x`, { cookie, accept: 'application/json' })));
}

test('no SESSION_ENCRYPTION_KEY: a group removed at the provider gives 403 on both proxies within SESSION_REVALIDATE', async () => {
  assert.equal(env.split.env.SESSION_ENCRYPTION_KEY, undefined);
  const jar = new CookieJar();
  const login = await loginThroughProvider({ loginUrl: `${env.split.proxies[0].url}/auth/login`, email: USER.email, password: USER.password, jar });
  assert.equal(login.status, 302, login.body);
  const cookie = jar.header(`${env.split.proxies[0].url}/`);
  assert.deepEqual(await onBothProxies(cookie), [200, 200]);
  const stored = new BetterSqlite3(env.split.databasePath, { readonly: true });
  try {
    assert.deepEqual(stored.prepare('SELECT length(key) AS bytes FROM session_encryption_key').all(), [{ bytes: 32 }], 'the admin process made and stored its key');
  } finally {
    stored.close();
  }
  env.split.idp.setUserGroups(USER.sub, []);
  await eventually('403 on both proxies once the session is re-checked', async () => (await onBothProxies(cookie)).every((status) => status === 403), 5_000, 100);
  assert.equal(await statusOf(`${env.split.proxies[1].url}/auth/profile`, { cookie }), 200, 'still signed in');
});
