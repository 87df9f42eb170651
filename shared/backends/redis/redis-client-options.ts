import type { RedisOptions } from 'ioredis';
import type { RedisTarget } from '../../redis-target.js';

/** What `new Redis(url?, options)` needs to reach a {@link RedisTarget}. */
export interface RedisClientOptions {
  /** A single node's URL; undefined for a Sentinel group. */
  url: string | undefined;
  options: RedisOptions;
}

/**
 * ioredis settings for `target`, in every mode:
 * - credentials (ACL user, password) for the data nodes, unless a URL names its own;
 * - TLS with the configured CA and client certificate (for the Sentinels too, with REDIS_TLS);
 * - Sentinel: the group's Sentinels and name; ioredis asks them for the primary on every connect
 *   (a primary that dies drops the connection, and the next one goes to the promoted replica), and
 *   learns new Sentinels as they appear. Not ioredis' `failoverDetector`: its Sentinel connections
 *   outlive `quit()` (ioredis 5.11), keeping a stopped process alive; a switch with the old primary
 *   still up shows as `READONLY`, handled below;
 * - a `READONLY` reply (the node was demoted to a replica under us) drops the connection, so the
 *   next one goes to the current primary instead of failing every write until a timeout.
 */
export function redisClientOptions(target: RedisTarget): RedisClientOptions {
  const tls = target.tls && { ...(target.tls.ca ? { ca: target.tls.ca } : {}), ...(target.tls.cert ? { cert: target.tls.cert, key: target.tls.key } : {}) };
  const common: RedisOptions = {
    ...(tls ? { tls } : {}),
    reconnectOnError: (error) => error.message.startsWith('READONLY'),
  };
  if (target.kind === 'single') {
    const url = new URL(target.url);
    return {
      url: target.url,
      options: {
        ...common,
        ...(url.username === '' && target.username !== undefined ? { username: target.username } : {}),
        ...(url.password === '' && target.password !== undefined ? { password: target.password } : {}),
      },
    };
  }
  return {
    url: undefined,
    options: {
      ...common,
      sentinels: target.sentinels,
      name: target.name,
      ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
      ...(target.username !== undefined ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
      ...(tls ? { enableTLSForSentinelMode: true, sentinelTLS: tls } : {}),
      updateSentinels: true,
    },
  };
}

/** A single node's target from its URL alone (tests, tools): no extra credentials, TLS as the scheme says. */
export function urlTarget(url: string): RedisTarget {
  return { kind: 'single', url, username: undefined, password: undefined, tls: undefined };
}
