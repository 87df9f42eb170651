/**
 * `node dist/bench/access-log/access-log-export-cost.js [--records 500000] [--batch 500] [--rate 0] [--rounds 2]`:
 * the admin's CPU per stored access-log record, without and with the OTLP export
 * (`ACCESS_LOG_EXPORT=otlp`). This process plays the admin: it starts the production writer,
 * `openAccessLogWriter(...)` (its thread stores into day files and rollups, and with the export
 * also encodes and POSTs every record), on a fresh gateway database each run, and hands it
 * `records` records (access-log-records.ts) as batches of `batch` JSON texts, one store call at a
 * time as the stream consumer and the embedded sink do, paced at `rate` records/s (0: as fast as
 * the writer takes them). The collector is otlp-receiver.ts in a child process, so its CPU is not
 * counted. Runs alternate without/with, `rounds` times each (A/B/A/B), each after the machine is
 * quiet.
 *
 * Measured per run: this process's CPU (user + system, all threads: `process.cpuUsage()`, which
 * is getrusage(RUSAGE_SELF)) from the first store call until `close()` has let the export send what
 * it holds and stopped the thread, divided by the records stored; a warm-up call before it is not
 * counted. The batches' JSON is made before, as the data plane or Redis makes it, not the admin.
 * Prints one JSON line ({@link ExportCostResult}); access-log-scale.ts runs it with
 * {@link measureExportCost}.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openAccessLogWriter } from '../../admin/access-log/writing/access-log-writer.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { diskBudgetFor } from '../../admin/access-log/writing/disk-budget.js';
import type { AccessLogBatch } from '../../shared/backends/access-log-batch.js';
import { freePort } from '../../test/support/free-port.js';
import { recordsOf } from './access-log-records.js';
import { waitForQuietMachine } from '../process-stats.js';
import { spawnNode } from '../processes.js';
import { seedRegistry } from '../seed.js';

export interface ExportCostOptions {
  /** Records per run. */
  records: number;
  /** Records per store call. */
  batch: number;
  /** Offered records/s; 0: each call as soon as the previous one is stored. */
  rate: number;
  /** Runs of each kind (without, with), alternating. */
  rounds: number;
}

/** One run. */
export interface ExportCostRun {
  export: boolean;
  /** Records stored, and accepted by the collector / dropped by the export (0 without it). */
  stored: number;
  exported: number;
  exportDropped: number;
  /** Wall time from the first store call until the writer closed, in s. */
  seconds: number;
  /** This process's CPU (all threads) per stored record, in µs. */
  cpuMicrosPerRecord: number;
  /** Other programs' CPU during the run, in cores (the OTLP receiver included). */
  otherCores: number;
}

export interface ExportCostResult {
  options: ExportCostOptions;
  runs: ExportCostRun[];
  /** Medians of the runs without and with the export, µs per record, and the difference. */
  withoutMicros: number;
  withMicros: number;
  exportMicros: number;
}

/** Other programs' CPU below which a run starts, in cores, and the longest wait for it, in ms. */
const QUIET_CORES = 0.25;
const QUIET_WAIT_MS = 60_000;
/** Records of the warm-up call before each measured run (not counted). */
const WARMUP_RECORDS = 2_000;

/** Runs the measurement in this process (the receiver in a child). */
export async function measureHere(options: ExportCostOptions): Promise<ExportCostResult> {
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-export-cost-'));
  const port = await freePort();
  const receiver = await spawnNode('otlp-receiver', 'bench/access-log/otlp-receiver.js', { env: { PORT: String(port) }, logDir: workDir, readyLine: /otlp receiver listening/ });
  try {
    const now = Date.now();
    const fromMs = Math.floor(now / 60_000) * 60_000 - 10 * 60_000;
    const batchesOf = (serviceId: string, count: number, seed: number): AccessLogBatch[] => {
      const all = [...recordsOf({ serviceId, prefix: '/public', count, fromMs, toMs: now, seed })];
      const batches: AccessLogBatch[] = [];
      for (let i = 0; i < all.length; i += options.batch) {
        const records = all.slice(i, i + options.batch);
        batches.push({ json: [JSON.stringify(records)], count: records.length });
      }
      return batches;
    };
    const runs: ExportCostRun[] = [];
    for (let round = 0; round < options.rounds; round++) {
      for (const exported of [false, true]) {
        const dir = join(workDir, `run-${runs.length}`);
        const databasePath = join(dir, 'gateway.db');
        const { publicService } = await seedRegistry(databasePath, 'http://127.0.0.1:9', 4);
        // Each run its own records (distinct event ids), made before it is measured.
        const warmup = [...batchesOf(publicService.id, WARMUP_RECORDS, 1_000 + runs.length), ...batchesOf(publicService.id, 1, 2_000 + runs.length)];
        const batches = batchesOf(publicService.id, options.records, 1 + runs.length);
        runs.push(await run(databasePath, exported ? new URL(`http://127.0.0.1:${port}/v1/logs`) : undefined, warmup, batches, options.rate));
        rmSync(dir, { recursive: true, force: true });
      }
    }
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return sorted.length % 2 ? sorted[(sorted.length - 1) / 2]! : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2;
    };
    const withoutMicros = round2(median(runs.filter((r) => !r.export).map((r) => r.cpuMicrosPerRecord)));
    const withMicros = round2(median(runs.filter((r) => r.export).map((r) => r.cpuMicrosPerRecord)));
    return { options, runs, withoutMicros, withMicros, exportMicros: round2(withMicros - withoutMicros) };
  } finally {
    await receiver.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** One run: a fresh writer, the warm-up, then `batches` paced at `rate`, until close. */
async function run(databasePath: string, exportUrl: URL | undefined, warmup: AccessLogBatch[], batches: AccessLogBatch[], rate: number): Promise<ExportCostRun> {
  const dir = accessLogDirOf(databasePath);
  const notices: string[] = [];
  const writer = openAccessLogWriter(
    { databasePath, dir, retentionDays: 30, budget: diskBudgetFor(dir, undefined), export: exportUrl && { url: exportUrl.href, headers: {} } },
    (notice) => notice.level === 'warn' && notices.push(notice.message),
  );
  for (const batch of warmup.slice(0, -1)) await writer.store(batch);
  await new Promise((resolve) => setTimeout(resolve, 1_200)); // the warm-up's export (a partial batch, after 1 s) is out of the way
  await writer.store(warmup.at(-1)!); // its answer brings the counters up to date (they come with each store's reply)
  const warm = writer.totals;
  await waitForQuietMachine(QUIET_CORES, QUIET_WAIT_MS);
  const machineBefore = readMachineBusy();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let records = 0;
  for (const batch of batches) {
    if (rate > 0) {
      const dueMs = started + (records / rate) * 1000;
      const wait = dueMs - performance.now();
      if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    await writer.store(batch);
    records += batch.count;
  }
  await writer.close();
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const machineBusy = readMachineBusy() - machineBefore;
  const totals = writer.totals;
  const stored = totals.stored - warm.stored;
  const ownSeconds = (cpu.user + cpu.system) / 1e6;
  if (notices.length > 0) process.stderr.write(`access-log-export-cost: writer warnings: ${[...new Set(notices)].join('; ')}\n`);
  return {
    export: exportUrl !== undefined,
    stored,
    exported: totals.exported - warm.exported,
    exportDropped: totals.exportDropped - warm.exportDropped,
    seconds: round2(seconds),
    cpuMicrosPerRecord: round2((ownSeconds * 1e6) / Math.max(1, stored)),
    otherCores: round2(Math.max(0, machineBusy / 100 - ownSeconds) / seconds),
  };
}

/** Busy CPU ticks of the whole machine (/proc/stat, USER_HZ = 100 per s). */
function readMachineBusy(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  return fields.slice(0, 8).reduce((sum, value) => sum + value, 0) - (fields[3] ?? 0) - (fields[4] ?? 0);
}

/** Runs the measurement in a child process (`node dist/bench/access-log/access-log-export-cost.js`), so no other work of the caller's is counted. */
export async function measureExportCost(options: ExportCostOptions): Promise<ExportCostResult> {
  const args = ['--records', String(options.records), '--batch', String(options.batch), '--rate', String(options.rate), '--rounds', String(options.rounds)];
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`access-log-export-cost exited with ${code}`);
  return JSON.parse(output.trim().split('\n').at(-1)!) as ExportCostResult;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      records: { type: 'string', default: '500000' },
      batch: { type: 'string', default: '500' },
      rate: { type: 'string', default: '0' },
      rounds: { type: 'string', default: '2' },
    },
  });
  measureHere({ records: Number(values.records), batch: Number(values.batch), rate: Number(values.rate), rounds: Number(values.rounds) }).then(
    (result) => {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`access-log-export-cost failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
