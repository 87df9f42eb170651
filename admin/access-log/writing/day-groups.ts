import type { AccessLogEntry } from '../../../shared/types.js';
import { dayOf } from '../day-files.js';
import type { DayGroup } from './day-writer.js';

/**
 * Shipped batches as the day files take them (access-log-store.ts): each batch's records split
 * by UTC day, every part under the batch's key, so a re-delivered batch is recognised in each day
 * it touches (day-writer.ts).
 */

/** The day groups of some shipped batches, and the records of days below the floor. */
export interface DayGroups {
  /** Each day's groups, in the order the batches came. */
  byDay: Map<number, DayGroup[]>;
  /** Records of days before `floor`: not written. */
  expired: AccessLogEntry[];
}

/** Groups `batches` (each the records one proxy shipped together) by day; empty batches are skipped. */
export function groupByDay(batches: readonly (readonly AccessLogEntry[])[], floor: number): DayGroups {
  const groups: DayGroups = { byDay: new Map(), expired: [] };
  for (const records of batches) {
    if (records.length === 0) continue;
    const key = batchKey(records[0]!.eventId);
    for (const [day, dayRecords] of splitByDay(records)) {
      if (day < floor) {
        groups.expired.push(...dayRecords);
        continue;
      }
      let dayGroups = groups.byDay.get(day);
      if (!dayGroups) groups.byDay.set(day, (dayGroups = []));
      dayGroups.push({ key, records: dayRecords });
    }
  }
  return groups;
}

/** The records of a batch by UTC day. */
function splitByDay(records: readonly AccessLogEntry[]): Map<number, AccessLogEntry[]> {
  const byDay = new Map<number, AccessLogEntry[]>();
  for (const record of records) {
    const day = dayOf(record.timestamp);
    const list = byDay.get(day);
    if (list) list.push(record);
    else byDay.set(day, [record]);
  }
  return byDay;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A shipped batch's key: the event id of its first record (ids are unique, and a re-delivery
 * carries the same text), as 16 bytes when it is a UUID.
 */
function batchKey(eventId: string): Buffer {
  return UUID.test(eventId) ? Buffer.from(eventId.replaceAll('-', ''), 'hex') : Buffer.from(eventId, 'utf8');
}
