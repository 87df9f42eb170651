/**
 * README "What ends a session" in the production topology (Redis, one admin process, two proxy
 * processes) against the real oidc-provider: the provider's back-channel logout and an admin's
 * "sign out everywhere" reach both proxies within a second; a group removed at the provider is
 * enforced by both after the refresh the admin process makes once for a burst of requests across
 * both proxies; the idle timeout ends a session in Redis. Embedded mode: test/auth/session-ends.test.ts.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { DEMO_USERS, type DemoUser } from '../support/identity-provider.js';

function account(name: string): DemoUser {
  return { sub: `${name}-sub`, email: `${name}@example.com`, name, password: `${name}-password`, groups: ['staff'] };
}
const USERS = {
  bcl: account('split-bcl'),
  admin: account('split-revoked'),
  groups: account('split-groups'),
  disabled: account('split-disabled'),
  outage: account('split-outage'),
  idle: account('split-idle'),
};

const env = useAdminSession(
  {
    topology: 'split',
    env: {
      OIDC_SCOPES: 'openid profile email offline_access',
      SESSION_REVALIDATE: '1s',
      SESSION_REVALIDATE_GRACE: '3s',
      SESSION_IDLE_TIMEOUT: '3s',
      SESSION_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    },
    provider: { refreshTokens: true, backchannelLogout: true, users: [...DEMO_USERS, ...Object.values(USERS)] },
    upstream: true,
  },
  async (env) => {
    await env.split.createService(env.admin, { name: 'Staff', path: '/staff', targetUrl: env.upstream.origin, requireAuth: true, access: { groups: ['staff'] } });
  },
);

/** Signs `user` in through the first proxy; the session cookie. */
async function signedIn(user: DemoUser): Promise<string> {
  const jar = new CookieJar();
  const login = await loginThroughProvider({ loginUrl: `${env.split.proxies[0].url}/auth/login`, email: user.email, password: user.password, jar });
  assert.equal(login.status, 302, login.body);
  return jar.header(`${env.split.proxies[0].url}/`);
}

/** The status each proxy answers for `path` with `cookie`. */
function onBothProxies(path: string, cookie: string): Promise<number[]> {
  return Promise.all(env.split.proxies.map((proxy) => statusOf(`${proxy.url}${path}`, { cookie, accept: 'application/json' })));
}

/** Waits for both proxies to answer `status`; resolves with the milliseconds waited. */
function untilBoth(path: string, cookie: string, status: number, timeoutMs: number): Promise<number> {
  return eventually(`${path} → ${status} on both proxies`, async () => (await onBothProxies(path, cookie)).every((got) => got === status), timeoutMs, 20);
}

test("the provider's back-channel logout ends the session on both proxies within a second", async () => {
  const cookie = await signedIn(USERS.bcl);
  assert.deepEqual(await onBothProxies('/staff/x', cookie), [200, 200]);
  const started = Date.now();
  await env.split.idp.backchannelLogout(USERS.bcl.sub);
  await untilBoth('/staff/x', cookie, 401, 1_000);
  assert.ok(Date.now() - started <= 1_000, `${Date.now() - started} ms`);
});

test("an admin's sign-out-everywhere ends the user's sessions on both proxies within a second", async () => {
  const [first, second] = [await signedIn(USERS.admin), await signedIn(USERS.admin)];
  assert.deepEqual([...(await onBothProxies('/staff/x', first)), ...(await onBothProxies('/staff/x', second))], [200, 200, 200, 200]);
  const listed = await request(`${env.split.adminUrl}/api/sessions?user=${USERS.admin.email}`, { headers: { cookie: env.admin.cookie } });
  assert.equal(((await listed.body.json()) as { total: number }).total, 2);
  const revoked = await request(`${env.split.adminUrl}/api/users/${USERS.admin.sub}/sessions`, { method: 'DELETE', headers: { cookie: env.admin.cookie, 'x-csrf-token': env.admin.csrfToken } });
  assert.deepEqual(await revoked.body.json(), { revoked: 2 });
  await untilBoth('/staff/x', first, 401, 1_000);
  await untilBoth('/staff/x', second, 401, 1_000);
});

test('a group removed at the provider: 20 requests across both proxies when due make one refresh, none signed out, then 403 on both', async () => {
  const signedInAt = Date.now();
  const cookie = await signedIn(USERS.groups);
  assert.deepEqual(await onBothProxies('/staff/x', cookie), [200, 200]);
  env.split.idp.setUserGroups(USERS.groups.sub, []);
  const before = env.split.idp.tokenRequests('refresh_token');
  await eventually('the session to fall due (SESSION_REVALIDATE 1s)', () => Date.now() - signedInAt >= 1_100, 3_000, 10);
  const burst = await Promise.all(Array.from({ length: 10 }, () => onBothProxies('/staff/x', cookie)));
  // Served on the session as it is while the refresh runs (200), or on the refreshed one (403): never signed out.
  assert.ok(burst.flat().every((status) => status === 200 || status === 403), String(burst.flat()));
  await untilBoth('/staff/x', cookie, 403, 3_000);
  assert.equal(env.split.idp.tokenRequests('refresh_token') - before, 1);
});

test('a grant revoked at the provider (account disabled) ends the session on both proxies', async () => {
  const cookie = await signedIn(USERS.disabled);
  assert.deepEqual(await onBothProxies('/staff/x', cookie), [200, 200]);
  env.split.idp.disableUser(USERS.disabled.sub);
  await untilBoth('/staff/x', cookie, 401, 5_000);
});

test('the provider down: both proxies keep the session within the grace (3s), and end it after', async () => {
  const cookie = await signedIn(USERS.outage);
  await env.split.idp.stop();
  try {
    const stopped = Date.now();
    let lastOk = stopped;
    await eventually('401 on both proxies after the grace', async () => {
      const statuses = await onBothProxies('/staff/x', cookie);
      if (statuses.every((status) => status === 200)) lastOk = Date.now();
      return statuses.every((status) => status === 401);
    }, 10_000, 100);
    assert.ok(lastOk - stopped >= 2_500, `kept for ${lastOk - stopped} ms`);
  } finally {
    await env.split.idp.resume();
  }
});

test('the idle timeout ends a session unused in Redis, and keeps one in use', async () => {
  const [used, unused] = [await signedIn(USERS.idle), await signedIn(USERS.idle)];
  const started = Date.now();
  while (Date.now() - started < 4_500) {
    assert.deepEqual(await onBothProxies('/staff/x', used), [200, 200], 'a session in use stays');
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
  assert.deepEqual(await onBothProxies('/staff/x', unused), [401, 401]);
});
