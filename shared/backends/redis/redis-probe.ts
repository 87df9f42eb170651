import { Redis } from 'ioredis';

const PROBE_TIMEOUT_MS = 1_000;

/**
 * Whether Redis at `url` answers PING within a second, for `/readyz`. One short-lived
 * connection per probe: readiness is polled every few seconds, not per request.
 */
export async function redisReachable(url: string): Promise<boolean> {
  const client = new Redis(url, { lazyConnect: true, connectTimeout: PROBE_TIMEOUT_MS, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
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
