/**
 * design.md §4.8, RATE_LIMIT_TOKEN, tried as a script flooding the admin API with one token: over
 * its limit it gets 429 like the other limits (Retry-After, RateLimit-*), whichever origin it
 * calls; another token, and the administrators' sessions, are not affected. Embedded (in memory)
 * and split (one Redis counter for every process).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { loadConfig } from '../../shared/config/config.js';
import { RATE_LIMIT_PREFIX } from '../../shared/backends/redis/redis-keys.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient, type ApiResponse } from '../support/api-client.js';
import { assertError, bearer, createToken } from './api-token-checks.js';

const LIMIT = 4;
const TOO_MANY = 'Too many requests, please try again later';

/** A refusal of the token limit: the interface's 429 and the headers of every limit (design.md §5). */
function assertLimited(response: ApiResponse): void {
  assertError(response, 429, TOO_MANY);
  assert.equal(response.headers['ratelimit-limit'], String(LIMIT));
  assert.equal(response.headers['ratelimit-remaining'], '0');
  assert.ok(Number(response.headers['retry-after']) > 0 && Number(response.headers['retry-after']) <= 15 * 60);
}

/**
 * The flood: a token spends its limit over `urls` (each origin serving the admin API), then is
 * refused on each; another token and `admin`'s session still get through.
 */
async function floodOneToken(urls: string[], adminUrl: string, admin: { cookie: string; csrfToken: string }): Promise<string> {
  const flooding = await createToken(adminUrl, admin, { name: 'runaway script', scope: 'write' });
  const other = await createToken(adminUrl, admin, { name: 'other script', scope: 'read' });
  for (let i = 0; i < LIMIT; i++) {
    const response = await apiClient(urls[i % urls.length]!)('GET', '/dashboard/stats', { authorization: bearer(flooding.secret) });
    assert.equal(response.status, 200, `request ${i + 1}: ${response.text}`);
  }
  for (const url of urls) {
    assertLimited(await apiClient(url)('GET', '/api/services', { authorization: bearer(flooding.secret) }));
    assertLimited(await apiClient(url)('DELETE', '/api/users/someone/sessions', { authorization: bearer(flooding.secret) }));
  }
  for (const url of urls) {
    assert.equal((await apiClient(url)('GET', '/api/services', { authorization: bearer(other.secret) })).status, 200, 'another token is not affected');
    assert.equal((await apiClient(url)('GET', '/api/services', { as: admin })).status, 200, 'nor an administrator’s session');
  }
  return flooding.id;
}

describe('embedded: the token limit', () => {
  const env = useAdminSession({ api: 'admin', env: { RATE_LIMIT_TOKEN: `${LIMIT}/15m` } });

  it('429 for the flooding token on the admin port and the public origin alike, counted once; others unaffected', async () => {
    await floodOneToken([env.gw.adminUrl, env.gw.origin], env.gw.adminUrl, env.admin);
  });

  it('a bearer credential that is no live token is not counted per token: it stays 401 (the general limit counts it by address)', async () => {
    for (let i = 0; i < LIMIT + 2; i++) {
      assert.equal((await env.call('GET', '/api/services', { authorization: bearer(`ght_${'C'.repeat(43)}`) })).status, 401);
    }
  });
});

describe('split: the token limit is one counter in Redis for every process', () => {
  const env = useAdminSession({ topology: 'split', env: { RATE_LIMIT_TOKEN: `${LIMIT}/15m` } });

  it('429 through the admin process and through a proxy process alike; others unaffected; the count is in Redis', async () => {
    const tokenId = await floodOneToken([env.split.adminUrl, env.split.proxies[0].url], env.split.adminUrl, env.admin);
    const redis = new Redis(env.split.redis.url);
    try {
      const counted = Number(await redis.get(`${RATE_LIMIT_PREFIX.token}:${tokenId}`));
      assert.ok(counted >= LIMIT + 4, `the shared counter holds every request (${counted})`);
      assert.ok((await redis.pttl(`${RATE_LIMIT_PREFIX.token}:${tokenId}`)) > 0, 'with its window');
    } finally {
      redis.disconnect();
    }
  });
});

describe('RATE_LIMIT_TOKEN', () => {
  const base = { OIDC_ISSUER: 'http://127.0.0.1:9/unreachable', OIDC_CLIENT_ID: 'x' };

  it('defaults to 1000 per 15 minutes; 0 turns it off; a malformed value stops the start naming it', () => {
    assert.deepEqual(loadConfig(base).rateLimitToken, { points: 1000, durationMs: 15 * 60_000 });
    assert.equal(loadConfig({ ...base, RATE_LIMIT_TOKEN: '0' }).rateLimitToken, null);
    assert.throws(() => loadConfig({ ...base, RATE_LIMIT_TOKEN: 'lots' }), /RATE_LIMIT_TOKEN/);
  });
});
