import type { Database, Statement } from 'better-sqlite3';
import { STATUS_CLASSES, type StatusClass } from '../../shared/http/status-classes.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { BUCKET_COLUMNS, BUCKET_COUNT, bucketOf, percentile } from './latency-histogram.js';

/** The rollup key that counts every service together (never a UUID, so never a service's id). */
export const ALL_SERVICES = '*';

const COUNT_COLUMNS = STATUS_CLASSES.map((name) => `count_${name}`);

/** The chart ranges: how many points, each covering how many minutes. */
export const TRAFFIC_RANGES = {
  '1h': { points: 60, stepMinutes: 1 },
  '1d': { points: 288, stepMinutes: 5 },
} as const;
export type TrafficRange = keyof typeof TRAFFIC_RANGES;

/** One step of a series: requests by status class and latency percentiles (ms; null without requests). */
export type TrafficPoint = { time: string; requests: number; p50: number | null; p95: number | null } & Record<StatusClass, number>;

/** The answer of `GET /dashboard/traffic`. */
export interface TrafficSeries {
  range: TrafficRange;
  /** The service, or null for all services together. */
  serviceId: string | null;
  stepSeconds: number;
  /** Start of the first point and end of the last (exclusive), ISO 8601 UTC. */
  from: string;
  to: string;
  /** Oldest first, one per step, steps without requests included; the last is the step in progress. */
  points: TrafficPoint[];
}

/** Counts of one (service, minute): requests per status class, then the latency buckets. */
class Tally {
  readonly counts = new Array<number>(STATUS_CLASSES.length).fill(0);
  readonly buckets = new Array<number>(BUCKET_COUNT).fill(0);

  /** Counts `count` requests (a summary record's, design.md §3.9) answered `statusCode` within `responseTimeMs`. */
  add(statusCode: number, responseTimeMs: number, count: number): void {
    this.counts[classIndex(statusCode)]! += count;
    this.buckets[bucketOf(responseTimeMs)]! += count;
  }
}

/** The index in STATUS_CLASSES of `statusCode`'s class; a status below 200 counts as 1xx, 500 and above as 5xx. */
const classIndex = (statusCode: number): number => Math.min(STATUS_CLASSES.length - 1, Math.max(0, Math.floor(statusCode / 100) - 1));
const MINUTE_MS = 60_000;

/**
 * The `access_rollups` table: per service (and for {@link ALL_SERVICES}) and per minute, requests
 * by status class and a latency histogram. Written by {@link add} inside the transaction that
 * inserts the access-log rows, so rollups and raw records cannot diverge; read by the console's
 * charts and tables, which therefore never scan the raw access log.
 */
export class TrafficRollups {
  readonly #upsert: Statement<unknown[]>;
  readonly #range: Statement<[string, number, number], unknown[]>;
  readonly #requestsSince: Statement<[number], { service_id: string; requests: number }>;

  constructor(db: Database) {
    const columns = ['service_id', 'minute', ...COUNT_COLUMNS, ...BUCKET_COLUMNS];
    const added = [...COUNT_COLUMNS, ...BUCKET_COLUMNS].map((column) => `${column} = ${column} + excluded.${column}`);
    this.#upsert = db.prepare(
      `INSERT INTO access_rollups (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})
       ON CONFLICT (service_id, minute) DO UPDATE SET ${added.join(', ')}`,
    );
    this.#range = db
      .prepare<[string, number, number], unknown[]>(
        `SELECT minute, ${COUNT_COLUMNS.join(', ')}, ${BUCKET_COLUMNS.join(', ')} FROM access_rollups
         WHERE service_id = ? AND minute >= ? AND minute < ?`,
      )
      .raw(true);
    this.#requestsSince = db.prepare(
      `SELECT service_id, sum(${COUNT_COLUMNS.join(' + ')}) AS requests FROM access_rollups
       WHERE minute >= ? GROUP BY service_id`,
    );
  }

  /**
   * Counts `records` into their minutes, for their service and for all services, a summary record
   * for the requests it stands for (`count`). Call it inside
   * the transaction that inserted them, with only the records actually inserted.
   */
  add(records: readonly AccessLogEntry[]): void {
    const tallies = new Map<string, { serviceId: string; minute: number; tally: Tally }>();
    const tallyOf = (serviceId: string, minute: number): Tally => {
      const key = `${serviceId} ${minute}`;
      let entry = tallies.get(key);
      if (!entry) tallies.set(key, (entry = { serviceId, minute, tally: new Tally() }));
      return entry.tally;
    };
    for (const record of records) {
      const minute = Math.floor(record.timestamp / MINUTE_MS);
      const count = record.count ?? 1;
      tallyOf(record.serviceId, minute).add(record.statusCode, record.responseTimeMs, count);
      tallyOf(ALL_SERVICES, minute).add(record.statusCode, record.responseTimeMs, count);
    }
    for (const { serviceId, minute, tally } of tallies.values()) {
      this.#upsert.run(serviceId, minute, ...tally.counts, ...tally.buckets);
    }
  }

  /** The series of `range` ending with the step that holds `now`, for one service or {@link ALL_SERVICES}. */
  series(serviceId: string, range: TrafficRange, now = Date.now()): TrafficSeries {
    const { points: count, stepMinutes } = TRAFFIC_RANGES[range];
    const currentStep = Math.floor(Math.floor(now / MINUTE_MS) / stepMinutes) * stepMinutes;
    const first = currentStep - (count - 1) * stepMinutes;
    const end = currentStep + stepMinutes;
    const steps = Array.from({ length: count }, () => new Tally());
    for (const row of this.#range.all(serviceId, first, end) as number[][]) {
      const tally = steps[Math.floor((row[0]! - first) / stepMinutes)]!;
      for (let i = 0; i < STATUS_CLASSES.length; i++) tally.counts[i]! += row[1 + i]!;
      for (let i = 0; i < BUCKET_COUNT; i++) tally.buckets[i]! += row[1 + STATUS_CLASSES.length + i]!;
    }
    return {
      range,
      serviceId: serviceId === ALL_SERVICES ? null : serviceId,
      stepSeconds: stepMinutes * 60,
      from: new Date(first * MINUTE_MS).toISOString(),
      to: new Date(end * MINUTE_MS).toISOString(),
      points: steps.map((tally, i) => toPoint(tally, (first + i * stepMinutes) * MINUTE_MS)),
    };
  }

  /**
   * Requests per service (and under {@link ALL_SERVICES}, in total) from the minute that holds
   * `sinceMs` on; services without requests are absent.
   */
  requestsSince(sinceMs: number): Map<string, number> {
    const rows = this.#requestsSince.all(Math.floor(sinceMs / MINUTE_MS));
    return new Map(rows.map((row) => [row.service_id, row.requests]));
  }
}

function toPoint(tally: Tally, startMs: number): TrafficPoint {
  const byClass = Object.fromEntries(STATUS_CLASSES.map((name, i) => [name, tally.counts[i]!])) as Record<StatusClass, number>;
  return {
    time: new Date(startMs).toISOString(),
    requests: tally.counts.reduce((sum, n) => sum + n, 0),
    ...byClass,
    p50: percentile(tally.buckets, 0.5),
    p95: percentile(tally.buckets, 0.95),
  };
}
