import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startGatewayWithProvider } from '../support/gateway-with-provider.js';
import { startTestGateway } from '../support/gateway.js';

async function isAdmin(env: Awaited<ReturnType<typeof startGatewayWithProvider>>, email: string): Promise<boolean> {
  const result = await env.login(email);
  const cookie = `gw_session=${result.jar.get('gw_session', env.gw.origin)}`;
  const response = await request(`${env.gw.origin}/auth/profile`, { headers: { cookie } });
  return ((await response.body.json()) as { user: { isAdmin: boolean } }).user.isAdmin;
}

test('an issuer without form_post: query response mode and GET /auth/callback', async () => {
  const env = await startGatewayWithProvider({}, { responseModes: 'query-only' });
  try {
    const start = await request(`${env.gw.origin}/auth/login`);
    const location = new URL(String(start.headers.location));
    await start.body.dump();
    assert.equal(location.searchParams.get('response_mode'), null);
    const result = await env.login('admin@example.com', { returnTo: '/somewhere' });
    assert.equal(result.status, 302);
    assert.equal(result.finalLocation, '/somewhere');
    assert.ok(result.jar.get('gw_session', env.gw.origin));
  } finally {
    await env.close();
  }
});

test('isAdmin from ADMIN_GROUPS (the groups claim)', async () => {
  const env = await startGatewayWithProvider({ ADMIN_EMAILS: '', ADMIN_GROUPS: 'gatehouse-admins' });
  try {
    assert.equal(await isAdmin(env, 'admin@example.com'), true);
    assert.equal(await isAdmin(env, 'user@example.com'), false);
  } finally {
    await env.close();
  }
});

test('isAdmin from ADMIN_SUBJECTS, and from ADMIN_EMAILS in any case', async () => {
  const env = await startGatewayWithProvider({ ADMIN_EMAILS: 'ADMIN@example.com', ADMIN_SUBJECTS: 'demo-user' });
  try {
    assert.equal(await isAdmin(env, 'user@example.com'), true);
    assert.equal(await isAdmin(env, 'admin@example.com'), true);
  } finally {
    await env.close();
  }
});

test('the session lasts SESSION_TTL: the cookie says so and the stored session expires then', async () => {
  const env = await startGatewayWithProvider({ SESSION_TTL: '2h' });
  try {
    const result = await env.login('user@example.com');
    const stored = result.jar.all().find((cookie) => cookie.name === 'gw_session')!;
    const lifetimeMs = stored.expires! - Date.now();
    assert.ok(lifetimeMs > 2 * 3_600_000 - 60_000 && lifetimeMs <= 2 * 3_600_000, `cookie lifetime ${lifetimeMs} ms`);
    const session = await env.gw.gateway.sessions.get(stored.value);
    assert.ok(session && Math.abs(session.expiresAt - session.createdAt - 2 * 3_600_000) < 1000);
  } finally {
    await env.close();
  }
});

test('an unreachable issuer: GET /auth/login → 503 Identity provider unavailable', async () => {
  const gw = await startTestGateway();
  try {
    const response = await request(`${gw.origin}/auth/login`);
    assert.equal(response.statusCode, 503);
    assert.deepEqual(await response.body.json(), { error: 'Identity provider unavailable' });
  } finally {
    await gw.close();
  }
});
