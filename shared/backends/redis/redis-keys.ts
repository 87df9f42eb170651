/**
 * Every Redis key and pub/sub channel Gatehouse uses, in one place (all under `gatehouse:`), so
 * an operator can see what the gateway keeps in Redis and tests can inspect it.
 *
 * Redis Cluster runs a MULTI or a script only on keys of one hash slot, so the keys written
 * together share a hash tag (the part in braces, Redis Cluster spec "Hash tags"): `{sessions}`
 * (a session, its handle key and its indexes), `{registry}` and `{assertion-keys}` (a snapshot, its
 * version and epoch). Every other key stands alone and spreads over the cluster (rate-limit
 * counters, used token ids, refresh locks); the access-log stream is one key. Channels are
 * cluster-wide: a PUBLISH reaches the subscribers of every node.
 */

/** The hash tag of every session key: sessions and their indexes live in one slot (one primary). */
const SESSIONS = 'gatehouse:{sessions}';

/**
 * Hash per session, `PEXPIREAT` its expiry (sooner with an idle timeout): `data` (JSON
 * {@link Session}), `seen` (its last recorded use, epoch ms) and `exp` (its expiry, epoch ms).
 * Sessions made before hash tags lived at `gatehouse:sess:<hash>` (and before handles, at
 * `gatehouse:session:<hash>`); nothing reads those any more (they expire by themselves).
 */
export function sessionRedisKey(keyHash: string): string {
  return `${SESSIONS}:session:${keyHash}`;
}

/**
 * Hash per host session (design.md §4.16), keyed by the SHA-256 of its id, expiring with its
 * session: `session` (the session's key hash), `host`, `csrf`.
 */
export function sessionLinkKey(keyHash: string): string {
  return `${SESSIONS}:link:${keyHash}`;
}

/** String per session: the key hash of the session with this public handle; same expiry. */
export function sessionHandleKey(handle: string): string {
  return `${SESSIONS}:handle:${handle}`;
}

/**
 * Sorted sets of session handles scored by their expiry (epoch ms): every session, a subject's, a
 * verified email's (lower-cased) and a provider session's (`sid`). Ended members are removed by
 * whoever ends them, expired ones by the next read (ZREMRANGEBYSCORE).
 */
export const SESSIONS_INDEX_KEY = SESSIONS;
export const sessionsBySubKey = (sub: string): string => `${SESSIONS}:sub:${sub}`;
export const sessionsByEmailKey = (email: string): string => `${SESSIONS}:email:${email}`;
export const sessionsBySidKey = (sid: string): string => `${SESSIONS}:sid:${sid}`;

/** String per session being refreshed at the provider (a lock, `SET NX PX`): the holder's token. */
export const sessionRefreshLockKey = (handle: string): string => `gatehouse:sess-refresh:${handle}`;

/** Pub/sub channel: payload is the key hash (never the id) of a session ended or changed; every worker evicts it. */
export const SESSION_REVOKED_CHANNEL = 'gatehouse:session-revoked';

/** Pub/sub channel: payload is the handle of a session a data plane asks the admin plane to re-check. */
export const SESSION_REVALIDATE_CHANNEL = 'gatehouse:session-revalidate';

/** String per used back-channel logout token id (SHA-256 of the `jti`), with PX = how long to remember it. */
export const usedTokenIdKey = (hash: string): string => `gatehouse:used-jti:${hash}`;

/** String: JSON `{"version": n, "epoch": "…", "services": [...]}`, the whole registry. */
export const REGISTRY_KEY = 'gatehouse:{registry}';

/** String counter (INCR): the version of the latest registry snapshot. */
export const REGISTRY_VERSION_KEY = 'gatehouse:{registry}:version';

/** String: random id of the version counter's lifetime (see RegistrySnapshot.epoch). */
export const REGISTRY_EPOCH_KEY = 'gatehouse:{registry}:epoch';

/** Pub/sub channel: payload is the new snapshot's version. */
export const REGISTRY_CHANNEL = 'gatehouse:registry-changed';

/**
 * String: JSON `{"version": n, "epoch": "…", "keySet": {...}}`, the identity assertion's keys
 * (design.md §4.7), the signing key's private part included (Redis holds sessions already).
 */
export const ASSERTION_KEYS_KEY = 'gatehouse:{assertion-keys}';

/** String counter (INCR): the version of the latest assertion key set. */
export const ASSERTION_KEYS_VERSION_KEY = 'gatehouse:{assertion-keys}:version';

/** String: random id of that counter's lifetime (see Snapshot.epoch). */
export const ASSERTION_KEYS_EPOCH_KEY = 'gatehouse:{assertion-keys}:epoch';

/** Pub/sub channel: payload is the new key set's version. */
export const ASSERTION_KEYS_CHANNEL = 'gatehouse:assertion-keys-changed';

/**
 * Pub/sub channel: payload is a JSON TargetHealthReport (shared/types.ts), what one proxy process
 * sees of its targets, published every few seconds and on each change; the admin plane listens.
 * Nothing is stored: a report missed is replaced by the next.
 */
export const TARGET_HEALTH_CHANNEL = 'gatehouse:target-health';

/** Stream: one entry per access-log batch, field `records` = JSON array of AccessLogEntry. */
export const ACCESS_LOG_STREAM = 'gatehouse:access-log';

/** Consumer group of the admin process on {@link ACCESS_LOG_STREAM}. */
export const ACCESS_LOG_GROUP = 'gatehouse-admin';

/** Key prefixes of the rate limiters (rate-limiter-flexible appends `:<key>`: an address, or a token's id). */
export const RATE_LIMIT_PREFIX = { general: 'gatehouse:rl:general', auth: 'gatehouse:rl:auth', token: 'gatehouse:rl:token' } as const;

/**
 * String: JSON `{"version": n, "epoch": "…", "challenges": {...}}`, the ACME challenges under way
 * (design.md §4.15), with `:version` and `:epoch` beside it (event-bus/snapshot-topics.ts).
 */
export const ACME_CHALLENGES_KEY = 'gatehouse:{acme-challenges}';

/** Pub/sub channel: payload is the new challenge set's version. */
export const ACME_CHALLENGES_CHANNEL = 'gatehouse:acme-challenges-changed';

/**
 * String: JSON `{"version": n, "epoch": "…", "notice": {...}}`, which certificates the admin
 * process holds (hosts, fingerprints, the fetch token; never a private key: design.md §4.15), with
 * `:version` and `:epoch` beside it.
 */
export const CERTIFICATES_KEY = 'gatehouse:{certificates}';

/** Pub/sub channel: payload is the new certificate notice's version. */
export const CERTIFICATES_CHANNEL = 'gatehouse:certificates-changed';
