/**
 * The access-log scale scenario: the same admin reads and proxied load against two embedded
 * gateways, one with 100,000 stored access-log records and one with 10,000,000 (by default),
 * each a real process (access-log-scale-gateway.ts) whose log was filled before it started
 * (access-log-fill.ts). Measures:
 * - the admin's reads (access-log-admin-reads.ts): each read's median time on both, and the ratio
 *   big / small (target: at most 1.5);
 * - the slowest proxied request while a console polls: a paced load (paced-load.ts) on the big
 *   gateway's `/logged` service, idle and while its API logs page and console page are read every
 *   200 ms, in alternating runs; max and p99 (target: the max within 20 ms of idle);
 * - bytes per record on disk (target: at most 120);
 * - a day dropped by retention (access-log-day-drop.ts), in ms;
 * - the admin's CPU per stored record without and with the OTLP export (access-log-export-cost.ts).
 *
 * `npm run bench` runs it last (BENCH_ACCESS_LOG_SCALE=0 leaves it out); alone:
 * `node dist/bench/access-log/access-log-scale.js [--records 10000000] [--small-records 100000] [--quick]`,
 * which prints its tables and targets and writes bench/results/access-log-scale.json. Settings:
 * {@link readScaleSettings}.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { adminReads, AdminClients, pollConsole, timeReads, type AdminRead } from './access-log-admin-reads.js';
import { timeDayDrop } from './access-log-day-drop.js';
import { measureExportCost } from './access-log-export-cost.js';
import { LOGGED_PREFIX, startScaleGateway, type ScaleGateway } from './access-log-scale-gateway.js';
import { runPacedLoad } from '../paced-load.js';
import { cpuBetween, readCpu, waitForQuietMachine } from '../process-stats.js';
import { startBenchUpstream } from '../reference-servers.js';
import { log, printAccessLogScale, writeAccessLogScaleResults } from '../report.js';
import { accessLogScaleTargets } from '../targets.js';
import type { AccessLogScaleResult, PollingRun, ScaleSettings } from './access-log-scale-result.js';

/** A gateway's name from its size: `access-log-100k`, `access-log-10M`. */
function nameFor(records: number): string {
  const short = records >= 1e6 ? `${+(records / 1e6).toFixed(1)}M` : records >= 1e3 ? `${+(records / 1e3).toFixed(1)}k` : String(records);
  return `access-log-${short}`;
}

/**
 * The settings from the environment and, when run alone, the command line (flags win).
 * `BENCH_ACCESS_LOG_QUICK=1` or `--quick`: a reduced run (1,000,000 records, 10 reads each, 8 s
 * load runs, one round, 100,000 export records), about a minute and a half.
 */
export function readScaleSettings(env: Record<string, string | undefined> = process.env, argv: string[] = []): ScaleSettings {
  const { values } = parseArgs({
    args: argv,
    options: { records: { type: 'string' }, 'small-records': { type: 'string' }, quick: { type: 'boolean' } },
  });
  const quick = values.quick === true || env.BENCH_ACCESS_LOG_QUICK === '1';
  const number = (name: string, text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    if (!/^\d+$/.test(text) || Number(text) < 1) throw new Error(`${name} must be a whole number of at least 1, got "${text}"`);
    return Number(text);
  };
  const bigRecords = number('--records / BENCH_ACCESS_LOG_RECORDS', values.records ?? env.BENCH_ACCESS_LOG_RECORDS, quick ? 1_000_000 : 10_000_000);
  const smallRecords = number('--small-records / BENCH_ACCESS_LOG_SMALL_RECORDS', values['small-records'] ?? env.BENCH_ACCESS_LOG_SMALL_RECORDS, 100_000);
  if (smallRecords >= bigRecords) throw new Error(`the small log (${smallRecords} records) must hold fewer records than the big one (${bigRecords})`);
  return {
    enabled: env.BENCH_ACCESS_LOG_SCALE !== '0',
    bigRecords,
    smallRecords,
    days: 29,
    readRepeats: quick ? 10 : 20,
    fixedOffset: Math.min(90_000, Math.floor(smallRecords * 0.9)),
    pacedRate: 2_000,
    pacedSeconds: quick ? 8 : 20,
    pacedRounds: quick ? 1 : 2,
    pacedConnections: 64,
    pollIntervalMs: 200,
    exportRecords: quick ? 100_000 : 500_000,
    exportRounds: 2,
  };
}

/**
 * Other programs' CPU below which a measurement starts and counts, in cores; the longest wait for
 * it, in ms; how many times a proxied-load run during which they took more is run again.
 */
const QUIET_CORES = 0.25;
const QUIET_WAIT_MS = 120_000;
const NOISY_RETRIES = 2;
/** The proxied load's unmeasured warm-up, in s. */
const WARMUP_S = 3;

/**
 * Runs the scenario against `upstreamUrl` (the bench upstream), its gateways' files in `workDir`.
 * Each gateway is stopped and its files removed before it returns.
 */
export async function measureAccessLogScale(settings: ScaleSettings, upstreamUrl: string, workDir: string): Promise<AccessLogScaleResult> {
  const started = performance.now();
  log(`\nAccess-log scale: ${settings.smallRecords.toLocaleString('en-US')} and ${settings.bigRecords.toLocaleString('en-US')} records over ${settings.days} days, embedded gateways`);
  const gateways: ScaleGateway[] = [];
  const clients = new AdminClients();
  try {
    for (const records of [settings.smallRecords, settings.bigRecords]) {
      const gateway = await startScaleGateway({ name: nameFor(records), records, days: settings.days, upstreamUrl, workDir });
      gateways.push(gateway);
      const { fill } = gateway;
      log(`  ${gateway.name}: filled ${fill.records.toLocaleString('en-US')} records (${fill.batches.toLocaleString('en-US')} shipped batches) in ${fill.seconds} s, ${fill.wallPerSecond.toLocaleString('en-US')} records/s with ${fill.parts.length} processes (store: ${fill.parts.map((p) => p.storePerSecond.toLocaleString('en-US')).join(' + ')} records/s); ${fill.dayFiles} day files, ${(fill.bytes / 1e6).toFixed(1)} MB, ${fill.bytesPerRecord} bytes per record`);
    }
    const [small, big] = gateways as [ScaleGateway, ScaleGateway];

    await waitForQuietMachine(QUIET_CORES, QUIET_WAIT_MS);
    const reads = adminReads(settings.fixedOffset);
    const readResults = await timeReads([small, big], reads, settings.readRepeats, clients);
    for (const read of readResults) {
      const [s, b] = [read.times[small.name]!, read.times[big.name]!];
      log(`  read ${read.name}: ${s.medianMs} ms vs ${b.medianMs} ms (${(b.medianMs / s.medianMs).toFixed(2)}×; first ${s.firstMs} / ${b.firstMs} ms)`);
    }

    await stopGateway(small); // from here on the big gateway alone shares the cores with the load

    const pollReads = reads.filter((read) => read.name === 'newest page' || read.kind === 'console');
    const url = `${big.stack.origin}${LOGGED_PREFIX}/bench`;
    // Unmeasured: the gateway's first proxied requests (JIT, upstream connections, today's day file).
    await runPacedLoad({ url, rate: settings.pacedRate, durationS: WARMUP_S, connections: settings.pacedConnections });
    const runs: PollingRun[] = [];
    for (let round = 0; round < settings.pacedRounds; round++) {
      for (const polling of round % 2 === 0 ? [false, true] : [true, false]) {
        const run = await pacedRun(big, url, polling, pollReads, settings, clients);
        runs.push(run);
        const { load, poll } = run;
        const polled = poll ? `; console ${poll.reads} reads, median ${poll.medianMs} ms, max ${poll.maxMs} ms` : '';
        const repeated = run.discarded > 0 ? `, ${run.discarded} noisy run(s) repeated` : '';
        log(`  proxied ${settings.pacedRate}/s for ${settings.pacedSeconds} s, ${polling ? 'console polling' : 'idle'}: p50 ${load.latencyMs.p50} ms, p99 ${load.latencyMs.p99} ms, max ${load.latencyMs.max} ms, non-2xx ${load.responsesNon2xx}, errors ${load.errors}${polled}; gateway ${run.gatewayCores} cores, other programs ${run.otherCores} cores, generator late ${(load.lateShare * 100).toFixed(1)}%${repeated}`);
      }
    }
    await clients.close();

    await stopGateway(big);
    const dayDrop = timeDayDrop(big.databasePath);
    log(`  retention: deleting the oldest day (${dayDrop.day}, ${dayDrop.records.toLocaleString('en-US')} records, ${(dayDrop.bytes / 1e6).toFixed(1)} MB) took ${dayDrop.ms} ms`);
    for (const gateway of gateways) rmSync(join(workDir, gateway.name), { recursive: true, force: true });

    const exportCost = await measureExportCost({ records: settings.exportRecords, batch: 500, rate: 0, rounds: settings.exportRounds });
    log(`  admin CPU per stored record: ${exportCost.withoutMicros} µs without the export, ${exportCost.withMicros} µs with it (${exportCost.runs.map((r) => `${r.export ? 'with' : 'without'} ${r.cpuMicrosPerRecord}`).join(', ')})`);

    return {
      settings,
      gateways: gateways.map((g) => ({ name: g.name, fill: g.fill })),
      reads: readResults,
      polling: { rate: settings.pacedRate, durationS: settings.pacedSeconds, intervalMs: settings.pollIntervalMs, runs },
      dayDrop,
      exportCost,
      wallSeconds: Math.round((performance.now() - started) / 1000),
    };
  } finally {
    await clients.close();
    for (const gateway of gateways) await stopGateway(gateway);
  }
}

/**
 * One paced run of the proxied load on `gateway`, with a console polling `pollReads` when
 * `polling`; started once the machine is quiet, and run again (at most {@link NOISY_RETRIES} times)
 * when other programs took more than {@link QUIET_CORES} during it.
 */
async function pacedRun(gateway: ScaleGateway, url: string, polling: boolean, pollReads: readonly AdminRead[], settings: ScaleSettings, clients: AdminClients): Promise<PollingRun> {
  for (let discarded = 0; ; discarded++) {
    await waitForQuietMachine(QUIET_CORES, QUIET_WAIT_MS);
    const cpuBefore = readCpu();
    const maxTicks = Math.ceil((settings.pacedSeconds * 1000) / settings.pollIntervalMs) + 1;
    const poller = polling ? pollConsole(gateway, pollReads, settings.pollIntervalMs, maxTicks, clients) : undefined;
    const load = await runPacedLoad({ url, rate: settings.pacedRate, durationS: settings.pacedSeconds, connections: settings.pacedConnections });
    const poll = poller ? await poller.stop() : null;
    const cpu = cpuBetween(cpuBefore, readCpu());
    const run = { polling, load, poll, gatewayCores: cpu.byRole['embedded gateway'] ?? 0, otherCores: cpu.otherCores, discarded };
    if (cpu.otherCores <= QUIET_CORES || discarded >= NOISY_RETRIES) return run;
  }
}

const stopped = new WeakSet<ScaleGateway>();

/** Stops a gateway (once); its stored-records count is not needed here, so a failure to count is only logged. */
async function stopGateway(gateway: ScaleGateway): Promise<void> {
  if (stopped.has(gateway)) return;
  stopped.add(gateway);
  await gateway.stack.stop().catch((error: unknown) => log(`  (${gateway.name} stopped; counting its records failed: ${error instanceof Error ? error.message : String(error)})`));
}

async function main(): Promise<void> {
  const settings = readScaleSettings(process.env, process.argv.slice(2));
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-access-log-scale-'));
  const upstream = await startBenchUpstream(workDir);
  try {
    const result = await measureAccessLogScale(settings, upstream.url, workDir);
    printAccessLogScale(result);
    log('\nTargets');
    for (const t of accessLogScaleTargets(result)) log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.target}: ${t.detail}`);
    log(`\nScenario wall time ${result.wallSeconds} s; results written to ${writeAccessLogScaleResults(result)}`);
  } finally {
    await upstream.child.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`access-log scale failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
