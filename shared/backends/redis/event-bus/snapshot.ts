/**
 * A versioned snapshot in Redis, the way the admin plane shares whole states with the data planes
 * (design.md §2): one per {@link SnapshotTopic} (the registry, the assertion keys), each with its
 * own keys and change channel, written by snapshot-publisher.ts and followed by snapshot-follower.ts.
 */

/** What one kind of snapshot is called, where it lives, and how its payload is recognised. */
export interface SnapshotTopic<T> {
  /** For log lines: `registry`, `assertion keys`. */
  readonly name: string;
  /** String: JSON `{"version": n, "epoch": "…", "<field>": <payload>}`. */
  readonly key: string;
  /** String counter (INCR): the latest snapshot's version. */
  readonly versionKey: string;
  /** String: random id of the version counter's lifetime (see {@link Snapshot.epoch}). */
  readonly epochKey: string;
  /** Pub/sub channel: payload is the new snapshot's version. */
  readonly channel: string;
  /** The stored object's field that holds the payload (a JSON identifier). */
  readonly field: string;
  /** True when a stored payload has the expected shape (it comes from another process). */
  isPayload(value: unknown): value is T;
}

/** A snapshot as stored at its topic's key. */
export interface Snapshot<T> {
  /** From INCR of the topic's version key; grows with every publication within an epoch. */
  version: number;
  /**
   * Random id of the version counter's lifetime (the topic's epoch key). Redis losing its data (a
   * restart without persistence) restarts the count at 1 under a new epoch, so subscribers take a
   * snapshot of another epoch even when its version is lower than theirs.
   */
  epoch: string;
  payload: T;
}

/**
 * Publishes a snapshot atomically, so no reader ever sees a version without its payload:
 * GET (or SET, when missing) the epoch, INCR the version counter, SET the snapshot with version
 * and epoch spliced in (the payload JSON is passed through untouched), and PUBLISH the version on
 * the change channel. With onlyIfMissing = '1' it does nothing when a snapshot exists.
 *
 * KEYS: [1] snapshot, [2] version counter, [3] epoch.
 * ARGV: [1] payload JSON, [2] a fresh epoch id (used only when none exists),
 *       [3] onlyIfMissing ('1' | '0'), [4] change channel, [5] the payload's field name.
 * Returns {version, epoch}, or {0, ''} when skipped.
 */
export const PUBLISH_SNAPSHOT_LUA = `
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then return {0, ''} end
local epoch = redis.call('GET', KEYS[3])
if not epoch then
  epoch = ARGV[2]
  redis.call('SET', KEYS[3], epoch)
end
local version = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], '{"version":' .. version .. ',"epoch":"' .. epoch .. '","' .. ARGV[5] .. '":' .. ARGV[1] .. '}')
redis.call('PUBLISH', ARGV[4], version)
return {version, epoch}
`;

/**
 * Parses the stored JSON of `topic`; undefined when it is not such a snapshot (a corrupt value is
 * ignored, never allowed to replace what a subscriber has).
 */
export function parseSnapshot<T>(json: string, topic: SnapshotTopic<T>): Snapshot<T> | undefined {
  try {
    const value = JSON.parse(json) as Record<string, unknown>;
    const payload = value[topic.field];
    if (!Number.isSafeInteger(value.version) || typeof value.epoch !== 'string' || !topic.isPayload(payload)) {
      return undefined;
    }
    return { version: value.version as number, epoch: value.epoch, payload };
  } catch {
    return undefined;
  }
}

/** Whether `next` should replace `current`: anything beats nothing, another epoch, or a newer version. */
export function supersedes(next: Snapshot<unknown>, current: Snapshot<unknown> | undefined): boolean {
  return current === undefined || next.epoch !== current.epoch || next.version > current.version;
}
