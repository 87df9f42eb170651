import type { RedisTarget } from '../../../config/redis-target.js';
import { openRedisClient } from './redis-client-options.js';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Whether Redis (`target`'s primary, or a node of its Cluster) answers PING within a second, for
 * `/readyz`. One short-lived connection per probe: readiness is polled every few seconds, not per
 * request.
 */
export async function redisReachable(target: RedisTarget): Promise<boolean> {
  const client = openRedisClient(target, {
    lazyConnect: true,
    connectTimeout: PROBE_TIMEOUT_MS,
    commandTimeout: PROBE_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
