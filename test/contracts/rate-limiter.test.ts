/** The RateLimiter contract against MemoryRateLimiter (embedded) and RedisRateLimiter (real redis-server). */
import { MemoryRateLimiter } from '../../shared/backends/embedded/memory-rate-limiter.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RATE_LIMIT_PREFIX } from '../../shared/backends/redis/redis-keys.js';
import { RedisRateLimiter } from '../../shared/backends/redis/redis-rate-limiter.js';
import { redisForFile } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import type { RateLimit } from '../../shared/config/durations.js';
import { closeTracked, track } from '../support/tracked.js';
import { rateLimiterContract } from './rate-limiter.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();

rateLimiterContract('MemoryRateLimiter', async () => ({
  limiter: (limit) => new MemoryRateLimiter(limit),
  close: async () => {},
}));

const redisLimiter = (target: () => string | RedisTarget) => async () => {
  const connections = track(new RedisConnections(target()), (c) => c.close());
  await connections.ready(5_000);
  return {
    limiter: (limit: RateLimit | null) => new RedisRateLimiter(connections, limit, { keyPrefix: RATE_LIMIT_PREFIX.general }),
    close: closeTracked,
  };
};

rateLimiterContract('RedisRateLimiter', redisLimiter(() => redis.server.url));
rateLimiterContract('RedisRateLimiter on a Redis Cluster', redisLimiter(() => cluster.cluster.target));
