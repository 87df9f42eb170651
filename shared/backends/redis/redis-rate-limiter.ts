import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';
import type { RateLimit } from '../../config/durations.js';
import { FlexibleRateLimiter } from '../flexible-rate-limiter.js';
import { createLogger, type Logger } from '../../logger.js';
import { describeError } from '../../error-code.js';
import type { RedisConnections } from './connection/redis-connections.js';

export interface RedisRateLimiterOptions {
  /** Key prefix, distinct per limiter: `gatehouse:rl:general`, `gatehouse:rl:auth`, `gatehouse:rl:token` (see redis-keys.ts). */
  keyPrefix: string;
  logger?: Logger;
}

/**
 * Split-mode {@link RateLimiter}: rate-limiter-flexible's `RateLimiterRedis` on the shared command
 * connection (an ioredis client, so no `useRedisPackage`; its fixed-window Lua script keeps the
 * count at `<keyPrefix>:<key>`), so every worker counts against the same window. With
 * `rejectIfRedisNotReady` and an `insuranceLimiter` = `RateLimiterMemory` of the same limit, a
 * request while Redis is away is counted in this process's memory instead (per-worker counts,
 * starting from zero) and Redis takes over again once it is back.
 * Windows are whole seconds in Redis (the library's TTL unit): a limit's duration is rounded up to
 * at least 1 s. A `limit` of null allows everything without touching Redis.
 */
export class RedisRateLimiter extends FlexibleRateLimiter {
  constructor(connections: RedisConnections, limit: RateLimit | null, options: RedisRateLimiterOptions) {
    const logger = options.logger ?? createLogger('silent', 'rate-limiter');
    const duration = limit ? Math.max(1, Math.ceil(limit.durationMs / 1000)) : 0;
    const limiter = limit
      ? new RateLimiterRedis({
          storeClient: connections.command,
          keyPrefix: options.keyPrefix,
          points: limit.points,
          duration,
          rejectIfRedisNotReady: true,
          insuranceLimiter: new RateLimiterMemory({ points: limit.points, duration }),
        })
      : undefined;
    super(limit, limiter, (error) => logger.error({ err: describeError(error) }, 'rate limiter failed; allowing the request'));
  }
}
