/**
 * design.md §4.2: an email the identity provider has not verified may be anyone's, so it is never
 * forwarded as `X-Forwarded-Email`, shown as the user's email, audited, or matched against
 * ADMIN_EMAILS.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { userFromClaims } from '../../shared/identity/identity-claims.js';
import { loadConfig } from '../../shared/config/config.js';
import { useAdminSession } from '../support/admin-session.js';
import { DEMO_USERS, type DemoUser } from '../support/identity-provider.js';
import { headerValues, type Echo } from '../support/upstream.js';

const UNVERIFIED: DemoUser = { sub: 'claims-ceo', email: 'ceo@example.com', name: 'Not The CEO', password: 'pw', groups: [], emailVerified: false };
const SILENT: DemoUser = { sub: 'says-nothing', email: 'boss@example.com', name: 'Silent', password: 'pw', groups: [], emailVerified: 'absent' };

const env = useAdminSession(
  { env: { ADMIN_EMAILS: 'admin@example.com,ceo@example.com,boss@example.com' }, provider: { users: [...DEMO_USERS, UNVERIFIED, SILENT] }, upstream: true },
  async (env) => {
    await env.createService({ name: 'Private', path: '/private', targetUrl: env.upstream.origin, requireAuth: true });
  },
);

for (const user of [UNVERIFIED, SILENT]) {
  const claim = user.emailVerified === false ? 'false' : 'absent';
  test(`email_verified ${claim}: no X-Forwarded-Email, no email in the profile or the audit log, no admin rights`, async () => {
    const result = await env.login(user.email, { password: user.password });
    const cookie = `gw_session=${result.jar.get('gw_session', env.gw.origin)}`;
    const echoed = await request(`${env.gw.origin}/private/x`, { headers: { cookie } });
    const seen = (await echoed.body.json()) as Echo;
    assert.deepEqual(headerValues(seen, 'x-forwarded-user'), [user.sub]);
    assert.deepEqual(headerValues(seen, 'x-forwarded-email'), []);

    const profile = await request(`${env.gw.origin}/auth/profile`, { headers: { cookie } });
    assert.deepEqual(await profile.body.json(), { user: { sub: user.sub, name: user.name, email: '', isAdmin: false } });

    const admin = await env.signIn();
    const logs = await request(`${env.gw.origin}/dashboard/logs?limit=1000`, { headers: { cookie: admin.cookie } });
    const entries = ((await logs.body.json()) as { logs: Array<{ action: string; user_id: string; details: string }> }).logs;
    const login = entries.find((entry) => entry.action === 'USER_LOGIN' && entry.user_id === user.sub);
    assert.ok(login);
    assert.ok(!login.details.includes(user.email), login.details);
  });
}

test('a verified email is kept; without a name the user is named by preferred_username or subject, not by an unverified email', () => {
  const config = loadConfig({});
  assert.equal(userFromClaims({ sub: 's', email: 'a@example.com', email_verified: true }, config).email, 'a@example.com');
  assert.equal(userFromClaims({ sub: 's', email: 'a@example.com', email_verified: 'true' }, config).email, '', 'a string is not a verification');
  assert.equal(userFromClaims({ sub: 's', email: 'a@example.com' }, config).name, 's');
  assert.equal(userFromClaims({ sub: 's', email: 'a@example.com', preferred_username: 'ann' }, config).name, 'ann');
});
