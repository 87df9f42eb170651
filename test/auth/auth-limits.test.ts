import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { startGatewayWithProvider } from '../support/gateway-with-provider.js';

async function loginStatus(baseUrl: string): Promise<number> {
  const response = await request(`${baseUrl}/auth/login`);
  await response.body.dump();
  return response.statusCode;
}

async function failedCallback(baseUrl: string): Promise<number> {
  const response = await request(`${baseUrl}/auth/callback?code=x&state=y`, { headers: { cookie: 'gw_oidc=z' } });
  await response.body.dump();
  return response.statusCode;
}

test('authentication attempts at the spec default: 5 per 15 minutes, then 429 with Retry-After', async () => {
  const env = await startGatewayWithProvider({ RATE_LIMIT_AUTH: '5/15m' });
  try {
    for (let i = 0; i < 5; i++) assert.equal(await loginStatus(env.gw.origin), 302);
    const response = await request(`${env.gw.origin}/auth/login`);
    assert.equal(response.statusCode, 429);
    assert.deepEqual(await response.body.json(), { error: 'Too many requests, please try again later' });
    assert.ok(Number(response.headers['retry-after']) > 0);
    assert.equal(response.headers['ratelimit-limit'], '5');
  } finally {
    await env.close();
  }
});

test('failed callbacks count as attempts; successful ones do not', async () => {
  const env = await startGatewayWithProvider({ RATE_LIMIT_AUTH: '5/15m' });
  try {
    for (let i = 0; i < 4; i++) assert.equal((await env.login('user@example.com')).status, 302, `login ${i + 1}`);
    // 4 attempts so far (the 4 GET /auth/login); had the callbacks counted it would be 8.
    assert.equal(await failedCallback(env.gw.origin), 400);
    assert.equal(await failedCallback(env.gw.origin), 429, 'the 6th attempt is refused');
    assert.equal(await loginStatus(env.gw.origin), 429);
  } finally {
    await env.close();
  }
});
