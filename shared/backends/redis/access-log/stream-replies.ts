/**
 * Shapes of the Redis stream replies the access-log consumer reads, as ioredis returns them
 * (RESP2 arrays), turned into plain values. Unexpected shapes yield empty results, not throws.
 */

/** One stream entry; `fields` is null for an entry deleted while pending (Redis < 7 XAUTOCLAIM). */
export interface StreamEntry {
  id: string;
  fields: string[] | null;
}

/** XREADGROUP … STREAMS key >: `[[key, [[id, [f, v, …]], …]]]`, or null when nothing arrived. */
export function entriesOfRead(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  return reply.flatMap((stream: unknown) => (Array.isArray(stream) ? entries(stream[1]) : []));
}

/** XAUTOCLAIM: `[nextCursor, [[id, fields] | null, …], deletedIds?]`. */
export function claimReply(reply: unknown): { cursor: string; entries: StreamEntry[] } {
  if (!Array.isArray(reply) || typeof reply[0] !== 'string') return { cursor: '0-0', entries: [] };
  return { cursor: reply[0], entries: entries(reply[1]) };
}

function entries(list: unknown): StreamEntry[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((item: unknown): StreamEntry[] => {
    if (!Array.isArray(item) || typeof item[0] !== 'string') return [];
    return [{ id: item[0], fields: Array.isArray(item[1]) ? item[1].map(String) : null }];
  });
}

/** A flat `[name, value, name, value, …]` reply (XINFO) as a Map. */
export function flatMap(reply: unknown): Map<string, unknown> {
  const map = new Map<string, unknown>();
  if (!Array.isArray(reply)) return map;
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), reply[i + 1]);
  return map;
}

/** The `{pending, lastDelivered}` of group `name` in an XINFO GROUPS reply; undefined when absent. */
export function groupInfo(reply: unknown, name: string): { pending: number; lastDelivered: string } | undefined {
  if (!Array.isArray(reply)) return undefined;
  for (const group of reply) {
    const info = flatMap(group);
    if (info.get('name') === name) {
      return { pending: Number(info.get('pending')), lastDelivered: String(info.get('last-delivered-id')) };
    }
  }
  return undefined;
}

/** One consumer of an XINFO CONSUMERS reply: its pending entries and ms since it last acted. */
export interface ConsumerInfo {
  name: string;
  pending: number;
  idleMs: number;
}

/** XINFO CONSUMERS: `[[name, n, pending, p, idle, ms, …], …]`. */
export function consumersInfo(reply: unknown): ConsumerInfo[] {
  if (!Array.isArray(reply)) return [];
  return reply.map((consumer) => {
    const info = flatMap(consumer);
    return { name: String(info.get('name')), pending: Number(info.get('pending')), idleMs: Number(info.get('idle')) };
  });
}
