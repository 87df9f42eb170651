import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../../../config/redis-target.js';

/** A connection to Redis in any mode: one node (directly or through Sentinel), or a Cluster client. */
export type RedisClient = Redis | Cluster;

/**
 * A new ioredis client for `target` with `options` (the per-connection tuning: timeouts, offline
 * queue, retry strategy) on top of what the target needs in every mode:
 * - credentials (ACL user, password) for the data nodes, unless a URL names its own;
 * - TLS with the configured CA and client certificate (for the Sentinels too, with REDIS_TLS);
 * - Sentinel: the group's Sentinels and name; ioredis asks them for the primary on every connect
 *   (a primary that dies drops the connection, and the next one goes to the promoted replica), and
 *   learns new Sentinels as they appear. Not ioredis' `failoverDetector`: its Sentinel connections
 *   outlive `quit()` (ioredis 5.11), keeping a stopped process alive; a switch with the old primary
 *   still up shows as `READONLY`, handled below;
 * - Cluster: ioredis' Cluster client from the configured nodes (it learns the rest and the slot
 *   map from CLUSTER SLOTS, follows `MOVED`/`ASK`, and after a connection to a dead primary closes
 *   re-reads the slot map every 100 ms, up to 16 times, before a command fails). `options` then
 *   applies to every node connection, except what the Cluster client decides itself (offline
 *   queue, retry strategy, lazy connect: mapped to its own options);
 * - a `READONLY` reply (the node was demoted to a replica under us) drops the connection, so the
 *   next one goes to the current primary instead of failing every write until a timeout.
 */
export function openRedisClient(target: RedisTarget, options: RedisOptions): RedisClient {
  const nodeOptions: RedisOptions = { ...credentialsAndTls(target), reconnectOnError: (error) => error.message.startsWith('READONLY'), ...options };
  if (target.kind === 'single') return new Redis(target.url, nodeOptions);
  if (target.kind === 'sentinel') return new Redis({ ...nodeOptions, ...sentinelOptions(target, nodeOptions.tls) });
  return new Cluster(target.nodes, clusterOptions(nodeOptions));
}

/** ioredis `tls` options for `target`'s TLS files (CA, client certificate and key); undefined without TLS. */
export function tlsOptions(target: RedisTarget): RedisOptions['tls'] {
  return target.tls && { ...(target.tls.ca ? { ca: target.tls.ca } : {}), ...(target.tls.cert ? { cert: target.tls.cert, key: target.tls.key } : {}) };
}

function credentialsAndTls(target: RedisTarget): RedisOptions {
  const tls = tlsOptions(target);
  const url = target.kind === 'single' ? new URL(target.url) : undefined;
  return {
    ...(tls ? { tls } : {}),
    ...(!url?.username && target.username !== undefined ? { username: target.username } : {}),
    ...(!url?.password && target.password !== undefined ? { password: target.password } : {}),
  };
}

function sentinelOptions(target: Extract<RedisTarget, { kind: 'sentinel' }>, tls: RedisOptions['tls']): RedisOptions {
  return {
    sentinels: target.sentinels,
    name: target.name,
    ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
    ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
    updateSentinels: true,
  };
}

/** Node options split into the Cluster client's own and those of its node connections. */
function clusterOptions(nodeOptions: RedisOptions): ClusterOptions {
  const { enableOfflineQueue, retryStrategy, lazyConnect, connectTimeout, ...redisOptions } = nodeOptions;
  return {
    redisOptions: { ...redisOptions, connectTimeout },
    ...(enableOfflineQueue !== undefined ? { enableOfflineQueue } : {}),
    ...(lazyConnect !== undefined ? { lazyConnect } : {}),
    clusterRetryStrategy: retryStrategy ?? null,
    // Slot maps come from one node at a time; one that does not answer is given up on this soon.
    ...(connectTimeout !== undefined ? { slotsRefreshTimeout: connectTimeout } : {}),
  };
}
