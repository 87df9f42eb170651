/**
 * design.md §4.7 in the production topology: a policy set through the admin process reaches every
 * proxy process with the registry (over Redis), each decides on its own with the groups a real
 * sign-in stored in the Redis session, and a refusal is access-logged with the user.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';

const env = useAdminSession({ topology: 'split', upstream: true });

/** Waits until every proxy answers `path` with `status` for `cookie`. */
function onEveryProxy(path: string, cookie: string, status: number): Promise<number> {
  return eventually(`${path} → ${status} on both proxies`, async () => {
    const statuses = await Promise.all(env.split.proxies.map((proxy) => statusOf(`${proxy.url}${path}`, { cookie })));
    return statuses.every((got) => got === status);
  });
}

test('a group policy set on the admin process is enforced by every proxy process, with the groups of a real sign-in', async () => {
  const id = await env.split.createService(env.admin, { name: 'Ops tools', path: '/ops', targetUrl: env.upstream.origin, requireAuth: true, access: { groups: ['gatehouse-admins'] } });
  const [a, b] = env.split.proxies;
  const jar = new CookieJar();
  // user@example.com is in group `staff` only.
  const login = await loginThroughProvider({ loginUrl: `${a.url}/auth/login?returnTo=%2Fops%2Fx`, email: 'user@example.com', password: 'user-password', jar });
  assert.equal(login.finalLocation, '/ops/x');
  const cookie = jar.header(`${b.url}/ops/x`);
  await onEveryProxy('/ops/x', cookie, 403);
  const refused = await request(`${b.url}/ops/refused`, { headers: { cookie, accept: 'application/json' } });
  assert.equal(refused.statusCode, 403);
  assert.deepEqual(await refused.body.json(), { error: 'Access denied' });

  const changed = await request(`${env.split.adminUrl}/api/services/${id}`, {
    method: 'PUT',
    headers: { cookie: env.admin.cookie, 'x-csrf-token': env.admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ access: { groups: ['gatehouse-admins', 'staff'] } }),
  });
  assert.equal(changed.statusCode, 200, await changed.body.text());
  await onEveryProxy('/ops/x', cookie, 200);

  await eventually('the 403 stored with the user', async () => {
    const page = await request(`${env.split.adminUrl}/api/services/${id}/logs?limit=100`, { headers: { cookie: env.admin.cookie } });
    const logs = ((await page.body.json()) as { logs: Array<{ path: string; status_code: number; user_id: string | null }> }).logs;
    return logs.some((log) => log.path === '/ops/refused' && log.status_code === 403 && log.user_id === 'demo-user');
  });
});
