import type { Service } from '../../types.js';

/** A registry snapshot as stored at `gatehouse:registry`. */
export interface RegistrySnapshot {
  /** From INCR `gatehouse:registry:version`; grows with every publication within an epoch. */
  version: number;
  /**
   * Random id of the version counter's lifetime (`gatehouse:registry:epoch`). Redis losing its
   * data (a restart without persistence) restarts the count at 1 under a new epoch, so subscribers
   * take a snapshot of another epoch even when its version is lower than theirs.
   */
  epoch: string;
  services: readonly Service[];
}

/**
 * Publishes a snapshot atomically, so no reader ever sees a version without its services:
 * GET (or SET, when missing) the epoch, INCR the version counter, SET the snapshot with version
 * and epoch spliced in (the services JSON is passed through untouched), and PUBLISH the version on
 * the change channel. With onlyIfMissing = '1' it does nothing when a snapshot exists.
 *
 * KEYS: [1] snapshot, [2] version counter, [3] epoch.
 * ARGV: [1] services JSON array, [2] a fresh epoch id (used only when none exists),
 *       [3] onlyIfMissing ('1' | '0'), [4] change channel.
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
redis.call('SET', KEYS[1], '{"version":' .. version .. ',"epoch":"' .. epoch .. '","services":' .. ARGV[1] .. '}')
redis.call('PUBLISH', ARGV[4], version)
return {version, epoch}
`;

/**
 * Parses the stored JSON; undefined when it is not a snapshot (a corrupt value is ignored, never
 * allowed to clear a subscriber's routes).
 */
export function parseSnapshot(json: string): RegistrySnapshot | undefined {
  try {
    const value = JSON.parse(json) as { version?: unknown; epoch?: unknown; services?: unknown };
    if (!Number.isSafeInteger(value.version) || typeof value.epoch !== 'string' || !Array.isArray(value.services)) {
      return undefined;
    }
    return { version: value.version as number, epoch: value.epoch, services: value.services as Service[] };
  } catch {
    return undefined;
  }
}

/** Whether `next` should replace `current`: anything beats nothing, another epoch, or a newer version. */
export function supersedes(next: RegistrySnapshot, current: RegistrySnapshot | undefined): boolean {
  return current === undefined || next.epoch !== current.epoch || next.version > current.version;
}
