import type { RedisClient } from '../connection/redis-client-options.js';
import { consumersInfo, flatMap, groupInfo } from './stream-replies.js';

/**
 * XGROUP CREATE <stream> <group> 0 MKSTREAM: creates the stream if missing and the group reading
 * from its first entry, so nothing written before the admin process started (or after Redis lost
 * its data and the group with it) is skipped. An existing group (BUSYGROUP) is fine.
 */
export async function ensureGroup(redis: RedisClient, stream: string, group: string): Promise<void> {
  try {
    await redis.xgroup('CREATE', stream, group, '0', 'MKSTREAM');
  } catch (error) {
    if (!String((error as Error)?.message).startsWith('BUSYGROUP')) throw error;
  }
}

/**
 * Whether a command failed because the stream or group is gone (NOGROUP): recreate the group.
 * (Redis error replies begin with a stable code word: NOGROUP, BUSYGROUP, ERR…)
 */
export function isNoGroup(error: unknown): boolean {
  return String((error as Error)?.message).startsWith('NOGROUP');
}

/**
 * Whether `group` has consumed everything `stream` holds: nothing pending (every delivered entry
 * acknowledged) and its last delivered id equal to the stream's last generated id. One MULTI of
 * XINFO STREAM and XINFO GROUPS, so both describe the same moment. A missing stream counts as
 * drained; a missing group does not (its consumer has not started yet).
 */
export async function groupDrained(redis: RedisClient, stream: string, group: string): Promise<boolean> {
  const results = await redis.multi().xinfo('STREAM', stream).xinfo('GROUPS', stream).exec();
  const [streamResult, groupsResult] = results ?? [];
  if (streamResult?.[0]) {
    if (String(streamResult[0].message).includes('no such key')) return true;
    throw streamResult[0];
  }
  const lastGenerated = String(flatMap(streamResult?.[1]).get('last-generated-id'));
  const info = groupInfo(groupsResult?.[1], group);
  return info !== undefined && info.pending === 0 && info.lastDelivered === lastGenerated;
}

/**
 * XGROUP DELCONSUMER for every consumer of `group` but `self` that holds no pending entry and has
 * not read for `idleMs`: what a stopped process leaves behind (consumer names are per process, so
 * without this a group collects one per restart, forever). Deleting one that is in fact alive is
 * harmless: with nothing pending it loses nothing, and its next read recreates it. Returns the
 * names deleted.
 */
export async function forgetIdleConsumers(redis: RedisClient, stream: string, group: string, self: string, idleMs: number): Promise<string[]> {
  const idle = consumersInfo(await redis.xinfo('CONSUMERS', stream, group)).filter(
    (consumer) => consumer.name !== self && consumer.pending === 0 && consumer.idleMs >= idleMs,
  );
  for (const consumer of idle) await redis.xgroup('DELCONSUMER', stream, group, consumer.name);
  return idle.map((consumer) => consumer.name);
}
