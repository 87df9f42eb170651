/**
 * Fills a gateway's access log before the gateway starts: `records` records of one service over
 * the last `days` UTC days (access-log-records.ts: realistic variety, a daily cycle, grouped into
 * the batches the gateway's sink would have shipped), stored through the production code path,
 * {@link AccessLogStore.storeBatches} (what the writer thread calls; `insertBatch` is its
 * one-batch form), into the day files beside the gateway's database and the traffic rollups in
 * it. What it leaves is what the gateway would have stored had it served those requests: the same
 * day files, rows, dictionary, per-minute counts, one batch key per shipped batch, and rollups.
 * Only the transactions differ (one per {@link CALL_RECORDS} records instead of one per store
 * call), which changes no row.
 *
 * At ~4 requests/s the sink ships batches of 1–2 records, so every record also costs a batch key:
 * the store takes ~55,000 records/s here, not the ~200,000 of 500-record batches. The fill
 * therefore runs in `parts` child processes (default: one per core, at most 2), each storing
 * whole days of its own (day files are independent; the rollups' small transactions share the
 * gateway database under its busy timeout).
 *
 * Run alone: `node dist/bench/access-log/access-log-fill.js --database <gateway.db> --service <id>
 * [--prefix /public] [--records 10000000] [--days 29] [--parts 2]`; prints one JSON line
 * ({@link FillResult}). access-log-scale.ts calls {@link fillAccessLog}.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AccessLogStore } from '../../admin/access-log/writing/access-log-store.js';
import { accessLogDirOf, dayBytes, dayOf, DAY_MS, listDays } from '../../admin/access-log/day-files.js';
import { diskBudgetFor } from '../../admin/access-log/writing/disk-budget.js';
import { addressShareBytes } from '../../admin/access-log/writing/address-shares.js';
import { openDatabase } from '../../admin/database.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { recordsOf, shippedBatches, type RecordSpec } from './access-log-records.js';

/** The gateway's default ACCESS_LOG_RETENTION_DAYS. */
export const RETENTION_DAYS = 30;
/** Records per store call (one transaction per day it touches). */
const CALL_RECORDS = 10_000;
/** Most child processes a fill uses. */
const MAX_PARTS = 2;

export interface FillOptions {
  /** The gateway's database, migrated and seeded with the service (the day files go beside it). */
  databasePath: string;
  serviceId: string;
  /** The service's path prefix, e.g. `/public`. */
  prefix: string;
  /** Records, exactly. */
  records: number;
  /**
   * Whole UTC days before today that hold records (1 to {@link RETENTION_DAYS} − 1): records run
   * from midnight `days` days ago until now, so the oldest day file is a full day.
   */
  days: number;
  /** Child processes storing disjoint days at once (default: cores, at most {@link MAX_PARTS}). */
  parts?: number;
  seed?: number;
}

/** What one part (child process) stored. */
export interface PartResult {
  records: number;
  /** Shipped batches, one batch key each. */
  batches: number;
  /** Time inside the store's calls, in s. */
  storeSeconds: number;
  /** Records per second of store time. */
  storePerSecond: number;
  /** CPU of the part's process (user + system) per record, in µs, generating the records included. */
  cpuMicrosPerRecord: number;
}

/** What a fill did. */
export interface FillResult {
  records: number;
  batches: number;
  /** Epoch ms of the first and last possible record. */
  fromMs: number;
  toMs: number;
  parts: PartResult[];
  /** Wall time of the fill, in s, and records per second of it (all parts together). */
  seconds: number;
  wallPerSecond: number;
  /** Day files and their bytes on disk, each checkpointed (no WAL left) when its store closed. */
  dayFiles: number;
  bytes: number;
  /** `bytes` / `records`. */
  bytesPerRecord: number;
}

/** Stores the records of `spec`'s part in this process (synchronous: it holds the event loop throughout). */
export function fillPart(databasePath: string, spec: RecordSpec): PartResult {
  const cpuBefore = process.cpuUsage();
  const db = openDatabase(databasePath);
  const dir = accessLogDirOf(databasePath);
  const budget = diskBudgetFor(dir, undefined);
  // Each address's share of the day tallied as the writer thread does (no address of these records reaches it).
  const store = new AccessLogStore(db, { dir, retentionDays: RETENTION_DAYS, budget, addressShareBytes: addressShareBytes(budget, RETENTION_DAYS) });
  let batches = 0;
  let storeMs = 0;
  try {
    let call: AccessLogEntry[][] = [];
    let inCall = 0;
    const flush = () => {
      const at = performance.now();
      store.storeBatches(call);
      storeMs += performance.now() - at;
      call = [];
      inCall = 0;
    };
    for (const batch of shippedBatches(recordsOf(spec))) {
      call.push(batch);
      batches++;
      inCall += batch.length;
      if (inCall >= CALL_RECORDS) flush();
    }
    if (call.length > 0) flush();
  } finally {
    store.close(); // the last connection to each day file: checkpoints it and removes its WAL
    db.close();
  }
  const { stored, expired, discarded, duplicates } = store.totals;
  if (expired + discarded + duplicates > 0) throw new Error(`stored ${stored}, expired ${expired}, discarded ${discarded}, duplicates ${duplicates}`);
  const cpu = process.cpuUsage(cpuBefore);
  return {
    records: stored,
    batches,
    storeSeconds: round(storeMs / 1000, 2),
    storePerSecond: Math.round(stored / (storeMs / 1000)),
    cpuMicrosPerRecord: round((cpu.user + cpu.system) / Math.max(1, stored), 2),
  };
}

/**
 * Fills the access log of the gateway database in `options`, in child processes (this event loop
 * stays free), then measures the day files.
 * @throws when a part fails, or fewer records than asked were stored.
 */
export async function fillAccessLog(options: FillOptions): Promise<FillResult> {
  if (!(options.days >= 1 && options.days <= RETENTION_DAYS - 1)) throw new Error(`days must be 1–${RETENTION_DAYS - 1}`);
  const started = performance.now();
  const toMs = Date.now();
  const firstDay = dayOf(toMs) - options.days;
  const fromMs = firstDay * DAY_MS;
  const parts = Math.max(1, Math.min(options.parts ?? Math.min(MAX_PARTS, cpus().length), options.days + 1));
  const spanDays = options.days + 1; // today is the last, partial day
  const results = await Promise.all(
    Array.from({ length: parts }, (_, part) => {
      const partFromMs = (firstDay + Math.floor((spanDays * part) / parts)) * DAY_MS;
      const partToMs = part === parts - 1 ? toMs : (firstDay + Math.floor((spanDays * (part + 1)) / parts)) * DAY_MS;
      return runPart(options, { fromMs, toMs, partFromMs, partToMs });
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const records = results.reduce((sum, part) => sum + part.records, 0);
  if (records !== options.records) throw new Error(`stored ${records} of ${options.records} records`);
  const dir = accessLogDirOf(options.databasePath);
  const days = listDays(dir);
  const bytes = days.reduce((sum, day) => sum + dayBytes(dir, day), 0);
  return {
    records,
    batches: results.reduce((sum, part) => sum + part.batches, 0),
    fromMs,
    toMs,
    parts: results,
    seconds: round(seconds, 2),
    wallPerSecond: Math.round(records / seconds),
    dayFiles: days.length,
    bytes,
    bytesPerRecord: round(bytes / records, 1),
  };
}

/** Runs one part as `node access-log-fill.js --part …`; resolves with what it printed. */
async function runPart(options: FillOptions, span: { fromMs: number; toMs: number; partFromMs: number; partToMs: number }): Promise<PartResult> {
  const args = [
    '--database', options.databasePath, '--service', options.serviceId, '--prefix', options.prefix, '--records', String(options.records),
    '--from-ms', String(span.fromMs), '--to-ms', String(span.toMs), '--part-from-ms', String(span.partFromMs), '--part-to-ms', String(span.partToMs),
    '--seed', String(options.seed ?? 1),
  ];
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`access-log-fill part ${new Date(span.partFromMs).toISOString()} exited with ${code}`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as PartResult;
}

function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      database: { type: 'string' },
      service: { type: 'string' },
      prefix: { type: 'string', default: '/public' },
      records: { type: 'string', default: '10000000' },
      days: { type: 'string', default: '29' },
      parts: { type: 'string' },
      seed: { type: 'string', default: '1' },
      'from-ms': { type: 'string' },
      'to-ms': { type: 'string' },
      'part-from-ms': { type: 'string' },
      'part-to-ms': { type: 'string' },
    },
  });
  if (!values.database || !values.service) {
    throw new Error('usage: access-log-fill.js --database <gateway.db> --service <id> [--prefix /public] [--records N] [--days D] [--parts P]');
  }
  const result = values['part-from-ms'] === undefined
    ? await fillAccessLog({
        databasePath: values.database,
        serviceId: values.service,
        prefix: values.prefix,
        records: Number(values.records),
        days: Number(values.days),
        seed: Number(values.seed),
        ...(values.parts === undefined ? {} : { parts: Number(values.parts) }),
      })
    : fillPart(values.database, {
        serviceId: values.service,
        prefix: values.prefix,
        count: Number(values.records),
        fromMs: Number(values['from-ms']),
        toMs: Number(values['to-ms']),
        partFromMs: Number(values['part-from-ms']),
        partToMs: Number(values['part-to-ms']),
        seed: Number(values.seed),
      });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    process.stderr.write(`access-log-fill failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
