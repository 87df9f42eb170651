/**
 * design.md §4.7 through a real sign-in: the groups claim (OIDC_GROUPS_CLAIM) is read from the ID
 * token, else from userinfo, kept with the session, and decides access policies; an email the
 * identity provider has not verified never matches one; the profile stays the interface's four
 * fields (interface.md §2.4).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { request } from 'undici';
import { useAdminSession, type EmbeddedAdminSession } from '../support/admin-session.js';
import { DEMO_USERS, type DemoUser } from '../support/identity-provider.js';

/** Claims `ceo@example.com`, unverified, and no groups. */
const UNVERIFIED: DemoUser = { sub: 'claims-ceo', email: 'ceo@example.com', name: 'Not The CEO', password: 'pw', groups: [], emailVerified: false };
const USERS = [...DEMO_USERS, UNVERIFIED];

/** Registers the services the tests call: one per kind of policy. */
async function registerServices(env: EmbeddedAdminSession): Promise<void> {
  const protectedBy = (path: string, access: Record<string, string[]>) =>
    env.createService({ name: path, path, targetUrl: env.upstream.origin, requireAuth: true, access });
  await protectedBy('/staff-only', { groups: ['staff'] });
  await protectedBy('/admins-only', { groups: ['gatehouse-admins'] });
  await protectedBy('/ceo-only', { emails: ['ceo@example.com'], emailDomains: ['example.com'] });
}

/** Signs `user` in through the provider's forms; returns the session cookie for the gateway. */
async function sessionCookie(env: EmbeddedAdminSession, user: DemoUser): Promise<string> {
  const result = await env.login(user.email, { password: user.password });
  assert.equal(result.status, 302, result.body);
  return `gw_session=${result.jar.get('gw_session', env.gw.origin)}`;
}

async function statusOf(env: EmbeddedAdminSession, path: string, cookie: string): Promise<number> {
  const response = await request(`${env.gw.origin}${path}`, { headers: { cookie } });
  await response.body.dump();
  return response.statusCode;
}

for (const where of ['ID token', 'userinfo'] as const) {
  describe(`groups from the ${where}`, () => {
    // Without ADMIN_EMAILS, only the groups claim can make the demo admin an administrator.
    const env = useAdminSession(
      {
        env: { ADMIN_EMAILS: '', ADMIN_GROUPS: 'gatehouse-admins' },
        provider: { users: USERS, ...(where === 'userinfo' ? { userinfoOnlyClaims: ['groups'] } : {}) },
        upstream: true,
      },
      registerServices,
    );

    it('a member of the listed group passes; a non-member gets 403', async () => {
      const user = await sessionCookie(env, DEMO_USERS[1]!); // groups: staff
      assert.equal(await statusOf(env, '/staff-only/x', user), 200);
      assert.equal(await statusOf(env, '/admins-only/x', user), 403);
      const admin = await sessionCookie(env, DEMO_USERS[0]!); // groups: gatehouse-admins, staff
      assert.equal(await statusOf(env, '/admins-only/x', admin), 200);
      assert.equal(await statusOf(env, '/staff-only/x', admin), 200);
    });

    it('the groups make the administrator too (ADMIN_GROUPS), and the profile keeps exactly sub, name, email, isAdmin', async () => {
      const admin = await sessionCookie(env, DEMO_USERS[0]!);
      const profile = await request(`${env.gw.origin}/auth/profile`, { headers: { cookie: admin } });
      assert.deepEqual(await profile.body.json(), { user: { sub: 'demo-admin', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true } });
    });

    it('an unverified email matches neither an email nor a domain of a policy', async () => {
      const unverified = await sessionCookie(env, UNVERIFIED);
      assert.equal(await statusOf(env, '/ceo-only/x', unverified), 403);
      const verified = await sessionCookie(env, DEMO_USERS[1]!); // user@example.com, verified
      assert.equal(await statusOf(env, '/ceo-only/x', verified), 200, 'its domain matches');
    });
  });
}
