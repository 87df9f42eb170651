/**
 * Synthetic access-log records with the variety of real traffic, for the access-log scale
 * scenario (access-log-fill.ts, access-log-export-cost.ts): deterministic (seeded; the event ids
 * aside, random as the gateway's), produced in time order and in the shipped batches a gateway's
 * sink would have made of them, so a store receives what it would have received from a gateway
 * that served them.
 *
 * What varies, per record (fixed tables built from the seed):
 * - path: ~300 distinct paths under the service's prefix (API routes with ids from a small set,
 *   pages, static assets with hashed names), 3 % of requests with a query string used once
 *   (`?q=…&_=…`: what an app's search box or cache-buster sends), 8 % with one of a few shared
 *   queries (`?page=2`);
 * - user: 55 % anonymous, else one of {@link USERS} subjects (some far busier than others);
 * - client address: one of 300 (IPv4 and some IPv6);
 * - method: GET 80 %, POST 12 %, PUT 4 %, DELETE 2 %, PATCH 1 %, HEAD 1 %;
 * - status: 2xx 86 %, 3xx 5 %, 4xx 7 %, 5xx 2 % (200, 201, 204, 301, 302, 304, 400, 401, 403,
 *   404, 429, 500, 502, 503, 504);
 * - duration, in whole ms: log-normal around 12 ms, a long tail to seconds.
 * Arrival times: a fixed count per minute following a daily cycle (busiest at 14:00 UTC at 1.6×
 * the mean rate, quietest at 02:00 at 0.4×), uniformly random within the minute.
 */
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';

/** One minute, in ms. */
const MINUTE_MS = 60_000;
/** One day, in ms. */
const DAY_MS = 86_400_000;

/** The sink's defaults (shared/backends/batching-access-log-sink.ts): a batch ships 100 ms after its first record, or at 500 records. */
export const SINK_INTERVAL_MS = 100;
export const SINK_MAX_BATCH = 500;

/** Number of distinct signed-in users. */
export const USER_COUNT = 50;
/** Share of requests without a signed-in user (0–1). */
const ANONYMOUS_SHARE = 0.55;
/** Number of distinct client addresses. */
const ADDRESS_COUNT = 300;
/** Share of requests whose query string is used once (0–1). */
const UNIQUE_QUERY_SHARE = 0.03;
/** Share of requests with a common query string (0–1). */
const SHARED_QUERY_SHARE = 0.08;
/** Amplitude of the daily cycle, as a share of the mean rate (0–1). */
const DAILY_SWING = 0.6;
/** The busiest time of day, in ms after midnight UTC. */
const PEAK_MS = 14 * 3_600_000;

/** A small, fast, seeded PRNG (mulberry32): uniform floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The user subjects records carry (OpenID Connect `sub`s), in a fixed order: `USERS[i]`. */
export const USERS: readonly string[] = (() => {
  const random = seededRandom(7);
  return Array.from({ length: USER_COUNT }, () => `auth0|${Math.floor(random() * 2 ** 48).toString(16).padStart(12, '0')}`);
})();

/** A path below the prefix that a fixed share of records have, for the `path` filter: `/api/orders`. */
export const COMMON_PATH_FRAGMENT = '/api/orders';

/** What the generator needs to know. */
export interface RecordSpec {
  /** The service's id (`serviceId` of every record). */
  serviceId: string;
  /** The service's path prefix, e.g. `/public`: records carry the path as the client sent it. */
  prefix: string;
  /** How many records, exactly, over the whole span. */
  count: number;
  /** The span's first and last possible timestamps, epoch ms (`from` inclusive, on a minute; `to` exclusive). */
  fromMs: number;
  toMs: number;
  /**
   * Only the records of this part of the span, epoch ms on day boundaries (default: the whole
   * span): parts made in separate processes are together the records of the whole span.
   */
  partFromMs?: number;
  partToMs?: number;
  /** Seed of the PRNG (default 1): the same spec gives the same records (event ids aside: they are random, as the gateway's). */
  seed?: number;
}

/** Builds a weighted picker over `items` (weights need not sum to 1). */
function picker<T>(items: readonly (readonly [T, number])[]): (u: number) => T {
  const total = items.reduce((sum, [, weight]) => sum + weight, 0);
  const cumulative: number[] = [];
  let sum = 0;
  for (const [, weight] of items) cumulative.push((sum += weight / total));
  return (u) => {
    for (let i = 0; i < cumulative.length; i++) if (u < cumulative[i]!) return items[i]![0];
    return items[items.length - 1]![0];
  };
}

/** The distinct paths below the prefix (~300), with how often each is requested. */
function pathTable(random: () => number): (readonly [string, number])[] {
  const paths: (readonly [string, number])[] = [
    ['/', 40], ['/login', 6], ['/logout', 1], ['/dashboard', 20], ['/settings', 3], ['/favicon.ico', 8],
    ['/api/health', 10], ['/api/me', 25], ['/api/orders', 30], ['/api/search', 12], ['/api/products', 25], ['/api/cart', 15],
  ];
  for (let i = 0; i < 120; i++) paths.push([`/api/orders/${1000 + Math.floor(random() * 90_000)}`, 0.4]);
  for (let i = 0; i < 80; i++) paths.push([`/api/products/${Math.floor(random() * 1e6).toString(36)}`, 0.5]);
  for (let i = 0; i < 40; i++) paths.push([`/static/${['app', 'vendor', 'chunk'][i % 3]}.${Math.floor(random() * 2 ** 32).toString(16)}.${i % 4 === 0 ? 'css' : 'js'}`, 1.5]);
  for (let i = 0; i < 50; i++) paths.push([`/docs/${['guide', 'api', 'faq', 'changelog', 'pricing'][i % 5]}/${i}`, 0.3]);
  return paths;
}

/** The client addresses: mostly IPv4, some IPv6. */
function addressTable(random: () => number): string[] {
  return Array.from({ length: ADDRESS_COUNT }, (_, i) => {
    if (i % 10 === 9) return `2001:db8:${Math.floor(random() * 65536).toString(16)}::${Math.floor(random() * 65536).toString(16)}`;
    return `${[10, 172, 192, 203][i % 4]}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`;
  });
}

const METHODS = picker([['GET', 80], ['POST', 12], ['PUT', 4], ['DELETE', 2], ['PATCH', 1], ['HEAD', 1]] as const);
const STATUSES = picker([
  [200, 74], [201, 6], [204, 6],
  [301, 1], [302, 2], [304, 2],
  [400, 1.5], [401, 2], [403, 0.7], [404, 2.5], [429, 0.3],
  [500, 1], [502, 0.5], [503, 0.3], [504, 0.2],
] as const);
const SHARED_QUERIES = ['?page=2', '?page=3', '?sort=desc', '?limit=100', '?tab=activity', '?lang=de'];

/**
 * Cumulative share of a day's requests in `[0, msIntoDay)` under the daily cycle (the integral of
 * `1 + DAILY_SWING · cos(2π (t − PEAK) / day)`), as a share of a day.
 */
function cycleShare(msIntoDay: number): number {
  const angle = (2 * Math.PI) / DAY_MS;
  return (msIntoDay + (DAILY_SWING / angle) * (Math.sin(angle * (msIntoDay - PEAK_MS)) - Math.sin(angle * -PEAK_MS))) / DAY_MS;
}

/** Weight of `[fromMs, toMs)` under the daily cycle, in days (a whole day weighs 1). */
function cycleWeight(fromMs: number, toMs: number): number {
  const at = (ms: number) => Math.floor(ms / DAY_MS) + cycleShare(ms - Math.floor(ms / DAY_MS) * DAY_MS);
  return at(toMs) - at(fromMs);
}

/**
 * The records of `spec` (or of its part), oldest first, one minute at a time: each minute gets its
 * share of `count` under the daily cycle (rounded so the shares add up to `count` exactly), at
 * uniformly random times within it (integer ms; the same ms may repeat). The PRNG starts afresh
 * each UTC day, so a part is the same whichever process makes it.
 */
export function* recordsOf(spec: RecordSpec): Generator<AccessLogEntry> {
  const seed = spec.seed ?? 1;
  const tables = seededRandom(seed);
  const paths = picker(pathTable(tables).map(([path, weight]) => [`${spec.prefix}${path}`, weight] as const));
  const addresses = addressTable(tables);
  const total = cycleWeight(spec.fromMs, spec.toMs);
  const dueBy = (ms: number) => Math.round((spec.count * cycleWeight(spec.fromMs, ms)) / total);
  const start = Math.max(spec.fromMs, spec.partFromMs ?? spec.fromMs);
  const stop = Math.min(spec.toMs, spec.partToMs ?? spec.toMs);
  let emitted = dueBy(start);
  let random = seededRandom(0);
  for (let minute = start; minute < stop; minute += MINUTE_MS) {
    if (minute === start || minute % DAY_MS === 0) random = seededRandom(seed * 1_000_003 + Math.floor(minute / DAY_MS));
    const end = Math.min(stop, minute + MINUTE_MS);
    const due = dueBy(end);
    const times: number[] = [];
    for (let i = emitted; i < due; i++) times.push(minute + Math.floor(random() * (end - minute)));
    times.sort((a, b) => a - b);
    for (const timestamp of times) yield record(spec, timestamp, random, paths, addresses);
    emitted = due;
  }
}

function record(spec: RecordSpec, timestamp: number, random: () => number, paths: (u: number) => string, addresses: readonly string[]): AccessLogEntry {
  let path = paths(random());
  const query = random();
  if (query < UNIQUE_QUERY_SHARE) path += `?q=${Math.floor(random() * 2 ** 40).toString(36)}&_=${timestamp}`;
  else if (query < UNIQUE_QUERY_SHARE + SHARED_QUERY_SHARE) path += SHARED_QUERIES[Math.floor(random() * SHARED_QUERIES.length)]!;
  // Squaring skews users: the first ones are far busier than the last.
  const userId = random() < ANONYMOUS_SHARE ? null : USERS[Math.floor(random() ** 2 * USERS.length)]!;
  // Log-normal duration: median 12 ms, σ 1.1 (p99 ≈ 150 ms), capped at 30 s.
  const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  return {
    eventId: eventId(timestamp),
    serviceId: spec.serviceId,
    userId,
    path,
    method: METHODS(random()),
    statusCode: STATUSES(random()),
    responseTimeMs: Math.min(30_000, Math.round(12 * Math.exp(1.1 * normal))),
    ipAddress: addresses[Math.floor(random() * addresses.length)]!,
    timestamp,
  };
}

/**
 * Groups records (in time order) into the batches a gateway's sink ships
 * (shared/backends/batching-access-log-sink.ts): a batch is shipped {@link SINK_INTERVAL_MS}
 * after its first record, or as soon as it holds {@link SINK_MAX_BATCH}.
 */
export function* shippedBatches(records: Iterable<AccessLogEntry>): Generator<AccessLogEntry[]> {
  let batch: AccessLogEntry[] = [];
  for (const r of records) {
    if (batch.length > 0 && (r.timestamp >= batch[0]!.timestamp + SINK_INTERVAL_MS || batch.length >= SINK_MAX_BATCH)) {
      yield batch;
      batch = [];
    }
    batch.push(r);
  }
  if (batch.length > 0) yield batch;
}
