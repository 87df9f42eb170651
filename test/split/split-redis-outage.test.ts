import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';

const env = useAdminSession({ topology: 'split', upstream: true, admin: false });

test('Redis killed and restarted: routing, sessions, logins and access logs recover without restarting anything', async () => {
  const [a, b] = env.split.proxies;
  const admin = await env.split.signIn();
  const create = (body: Record<string, unknown>) => env.split.createService(admin, { targetUrl: env.upstream.origin, ...body });
  const publicId = await create({ name: 'Public', path: '/public', requireAuth: false });
  await create({ name: 'Private', path: '/private', requireAuth: true });
  await eventually('routes on both proxies', async () => (await statusOf(`${b.url}/public/`)) === 200 && (await statusOf(`${b.url}/private/`)) === 401);

  const jar = new CookieJar();
  await loginThroughProvider({ loginUrl: `${a.url}/auth/login`, email: 'user@example.com', password: 'user-password', jar });
  const cookie = jar.header(`${a.url}/`);
  const unvalidated = await env.split.signIn({ sub: 'never-seen', isAdmin: false });
  assert.equal(await statusOf(`${b.url}/private/x`, { cookie }), 200); // validated just now on B

  await env.split.redis.kill();
  let servedDuringOutage = 0;
  for (let i = 0; i < 20; i++) {
    assert.equal(await statusOf(`${b.url}/public/during-${i}`), 200, 'public services keep working on the last registry snapshot');
    servedDuringOutage++;
  }
  assert.equal(await statusOf(`${b.url}/private/x`, { cookie }), 200, 'a session validated in the last seconds keeps working');
  const refused = await request(`${b.url}/private/x`, { headers: { cookie: unvalidated.cookie } });
  assert.equal(refused.statusCode, 503, 'any other session fails closed');
  assert.deepEqual(await refused.body.json(), { error: 'Session store unavailable' });
  const readiness = await request(`${b.internalUrl}/readyz`);
  assert.equal(readiness.statusCode, 503);
  await readiness.body.dump();

  await env.split.redis.restart();
  // This Redis keeps nothing on disk, so sessions are gone; the registry is re-published by the admin.
  const adminAgain = await env.split.signIn();
  await eventually('the proxies ready again', async () => (await statusOf(`${b.internalUrl}/readyz`)) === 200 && (await statusOf(`${a.internalUrl}/readyz`)) === 200, 15_000);
  await eventually('records buffered during the outage stored', async () => {
    const page = await request(`${env.split.adminUrl}/api/services/${publicId}/logs?limit=1000`, { headers: { cookie: adminAgain.cookie } });
    const logs = ((await page.body.json()) as { logs: Array<{ path: string }> }).logs;
    return logs.filter((log) => log.path.startsWith('/public/during-')).length === servedDuringOutage;
  }, 15_000);

  const relogin = new CookieJar();
  const result = await loginThroughProvider({ loginUrl: `${a.url}/auth/login?returnTo=%2Fprivate%2F`, email: 'admin@example.com', password: 'admin-password', jar: relogin });
  assert.equal(result.finalLocation, '/private/');
  assert.equal(await statusOf(`${b.url}/private/`, { cookie: relogin.header(`${b.url}/`) }), 200);

  const afterOutage = await request(`${env.split.adminUrl}/api/services`, {
    method: 'POST',
    headers: { cookie: adminAgain.cookie, 'x-csrf-token': adminAgain.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'After outage', path: '/after', targetUrl: env.upstream.origin, requireAuth: false }),
  });
  assert.equal(afterOutage.statusCode, 201);
  await afterOutage.body.dump();
  await eventually('a registry change after the outage reaches both proxies', async () => (await statusOf(`${a.url}/after/`)) === 200 && (await statusOf(`${b.url}/after/`)) === 200, 5_000);
});
