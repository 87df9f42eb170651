/**
 * Every Redis key and pub/sub channel Gatehouse uses, in one place (all under `gatehouse:`), so
 * an operator can see what the gateway keeps in Redis and tests can inspect it.
 */

/** String (JSON {@link Session}) per session, with PX = its remaining lifetime. */
export function sessionRedisKey(keyHash: string): string {
  return `gatehouse:session:${keyHash}`;
}

/** Pub/sub channel: payload is the session's key hash (never the id); every worker evicts it. */
export const SESSION_REVOKED_CHANNEL = 'gatehouse:session-revoked';

/** String: JSON `{"version": n, "epoch": "…", "services": [...]}`, the whole registry. */
export const REGISTRY_KEY = 'gatehouse:registry';

/** String counter (INCR): the version of the latest registry snapshot. */
export const REGISTRY_VERSION_KEY = 'gatehouse:registry:version';

/** String: random id of the version counter's lifetime (see RegistrySnapshot.epoch). */
export const REGISTRY_EPOCH_KEY = 'gatehouse:registry:epoch';

/** Pub/sub channel: payload is the new snapshot's version. */
export const REGISTRY_CHANNEL = 'gatehouse:registry-changed';

/**
 * String: JSON `{"version": n, "epoch": "…", "keySet": {...}}`, the identity assertion's keys
 * (design.md §4.7), the signing key's private part included (Redis holds sessions already).
 */
export const ASSERTION_KEYS_KEY = 'gatehouse:assertion-keys';

/** String counter (INCR): the version of the latest assertion key set. */
export const ASSERTION_KEYS_VERSION_KEY = 'gatehouse:assertion-keys:version';

/** String: random id of that counter's lifetime (see Snapshot.epoch). */
export const ASSERTION_KEYS_EPOCH_KEY = 'gatehouse:assertion-keys:epoch';

/** Pub/sub channel: payload is the new key set's version. */
export const ASSERTION_KEYS_CHANNEL = 'gatehouse:assertion-keys-changed';

/** Stream: one entry per access-log batch, field `records` = JSON array of AccessLogEntry. */
export const ACCESS_LOG_STREAM = 'gatehouse:access-log';

/** Consumer group of the admin process on {@link ACCESS_LOG_STREAM}. */
export const ACCESS_LOG_GROUP = 'gatehouse-admin';

/** Key prefixes of the two rate limiters (rate-limiter-flexible appends `:<key>`). */
export const RATE_LIMIT_PREFIX = { general: 'gatehouse:rl:general', auth: 'gatehouse:rl:auth' } as const;
