/**
 * RedisRateLimiter beyond the contract (design.md §2.1): counts shared between workers,
 * separate limiters kept apart, and the in-memory insurance while Redis is down.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RateLimit } from '../../shared/config/durations.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RATE_LIMIT_PREFIX } from '../../shared/backends/redis/redis-keys.js';
import { RedisRateLimiter } from '../../shared/backends/redis/redis-rate-limiter.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { track } from '../support/tracked.js';

const redis = redisForFile();

/** A limiter on its own connections, as one worker process has it. */
async function worker(limit: RateLimit | null, keyPrefix: string = RATE_LIMIT_PREFIX.general): Promise<{ limiter: RedisRateLimiter; connections: RedisConnections }> {
  const connections = track(new RedisConnections(redis.server.url, { maxReconnectDelayMs: 100 }), (c) => c.close());
  await connections.ready(5_000);
  return { limiter: new RedisRateLimiter(connections, limit, { keyPrefix }), connections };
}

const allowed = async (limiter: RedisRateLimiter, key: string, times: number) => {
  const results = [];
  for (let i = 0; i < times; i++) results.push((await limiter.consume(key)).allowed);
  return results;
};

describe('RedisRateLimiter', SUITE, () => {
  it('two workers count against the same window: the limit+1-th request across both is refused', async () => {
    const limit = { points: 4, durationMs: 60_000 };
    const [a, b] = [await worker(limit), await worker(limit)];
    const key = 'shared-203.0.113.1';
    assert.deepEqual([...(await allowed(a.limiter, key, 2)), ...(await allowed(b.limiter, key, 2))], [true, true, true, true]);
    assert.equal((await a.limiter.consume(key)).allowed, false);
    assert.equal((await b.limiter.consume(key)).allowed, false);
    const count = await a.connections.command.get(`${RATE_LIMIT_PREFIX.general}:${key}`);
    assert.equal(count, '6', 'the count lives in Redis under the limiter\'s prefix');
  });

  it('bursts on two workers at once: exactly the limit is allowed across both, in one command per worker', async () => {
    const limit = { points: 10, durationMs: 60_000 };
    const [a, b] = [await worker(limit), await worker(limit)];
    const key = 'burst-203.0.113.2';
    await a.connections.command.config('RESETSTAT');
    const burst = (limiter: RedisRateLimiter) => Array.from({ length: 8 }, () => limiter.consume(key));
    const decisions = await Promise.all([...burst(a.limiter), ...burst(b.limiter)]);
    assert.equal(decisions.filter((d) => d.allowed).length, 10);
    assert.equal((await b.limiter.consume(key)).allowed, false);
    const stats = await a.connections.command.info('commandstats');
    const scriptCalls = [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+),/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    // 3 = one consume per worker for its batch, one for the last request; an EVALSHA that finds no
    // script yet is retried as EVAL, so each may count twice.
    assert.ok(scriptCalls >= 3 && scriptCalls <= 6, `one script call per worker and batch, not one per request (${scriptCalls})`);
  });

  it('the general and the auth limiter keep separate counts', async () => {
    const limit = { points: 1, durationMs: 60_000 };
    const general = await worker(limit, RATE_LIMIT_PREFIX.general);
    const auth = await worker(limit, RATE_LIMIT_PREFIX.auth);
    assert.equal((await general.limiter.consume('k')).allowed, true);
    assert.equal((await auth.limiter.consume('k')).allowed, true);
    assert.equal((await auth.limiter.consume('k')).allowed, false);
  });

  it('a null limit never touches Redis', async () => {
    const { limiter, connections } = await worker(null);
    await limiter.consume('k');
    assert.deepEqual(await connections.command.keys('*'), []);
  });

  it('while Redis is down the limit holds in memory (per worker), and Redis counts again after a restart', async () => {
    const limit = { points: 3, durationMs: 60_000 };
    const [a, b] = [await worker(limit), await worker(limit)];
    assert.deepEqual(await allowed(a.limiter, 'k', 2), [true, true]);

    await redis.server.kill();
    assert.deepEqual(await allowed(a.limiter, 'k', 4), [true, true, true, false], 'memory insurance: a fresh count, same limit');
    assert.deepEqual(await allowed(b.limiter, 'k', 4), [true, true, true, false], 'each worker counts on its own meanwhile');

    await redis.server.restart(); // empty: counts start again
    await Promise.all([a.connections.ready(5_000), b.connections.ready(5_000)]);
    assert.deepEqual(await allowed(a.limiter, 'fresh', 2), [true, true]);
    assert.deepEqual(await allowed(b.limiter, 'fresh', 2), [true, false], 'shared through Redis again');
  });
});
