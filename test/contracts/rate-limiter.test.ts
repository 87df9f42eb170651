/** The RateLimiter contract against MemoryRateLimiter (embedded) and RedisRateLimiter (real redis-server). */
import { after, afterEach, before } from 'node:test';
import { MemoryRateLimiter } from '../../shared/backends/embedded/memory-rate-limiter.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { RATE_LIMIT_PREFIX } from '../../shared/backends/redis/redis-keys.js';
import { RedisRateLimiter } from '../../shared/backends/redis/redis-rate-limiter.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { closeTracked, track } from './fixtures.js';
import { rateLimiterContract } from './rate-limiter.contract.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
afterEach(closeTracked);
after(async () => {
  await closeTracked();
  await redis.stop();
});

rateLimiterContract('MemoryRateLimiter', async () => ({
  limiter: (limit) => new MemoryRateLimiter(limit),
  close: async () => {},
}));

rateLimiterContract('RedisRateLimiter', async () => {
  const connections = track(new RedisConnections(redis.url), (c) => c.close());
  await connections.ready(5_000);
  await connections.command.flushall();
  return {
    limiter: (limit) => new RedisRateLimiter(connections, limit, { keyPrefix: RATE_LIMIT_PREFIX.general }),
    close: closeTracked,
  };
});
