/**
 * The measurements: what is loaded, how, and how rounds are combined.
 * - throughput: closed-loop autocannon at a fixed connection count, as fast as responses come (a
 *   target with a `client`: HTTP/2 streams or gRPC calls from the load thread, load-thread.ts);
 * - fixed rate: the same offered rate for every target, with autocannon's `overallRate` and with
 *   the evenly paced generator (paced-load.ts);
 * - memory: the data plane's resident memory under many connections.
 * Targets compared with each other take turns round by round (interleaved, the order reversed
 * every other round), every run records how much CPU other programs on the machine took
 * meanwhile, and a round during which they took too much is run again (see `quietRound`).
 */
import type { ClientLedger } from './access-log/access-log-check.js';
import { runLoad, type LoadCounts, type LoadResult } from './load.js';
import { runInLoadThread, type ThreadLoad } from './load-thread.js';
import { runPacedLoad, type PacedLoadResult } from './paced-load.js';
import { cpuBetween, readCpu, sampleTreeMemory, treeMemory, waitForQuietMachine, type CpuUse } from './process-stats.js';
import type { BenchSettings } from './settings.js';

/** Something to put load on. */
export interface Target {
  /** Row label, e.g. `baseline`, `gateway protected`. */
  name: string;
  /** Worker processes serving it (the upstream: 1). */
  workers: number;
  url: string;
  headers?: Record<string, string>;
  /** Where its access-log records go, for the access-log check (gateway targets only). */
  account?: { stack: string; serviceId: string };
  /**
   * The closed-loop client of its throughput runs: autocannon (HTTP/1.1) when unset, else in the
   * load thread (load-thread.ts) `connections` HTTP/2 streams over `sessions` TLS connections
   * trusting `caFile` (http2-load.ts, `url` https), or `connections` concurrent gRPC unary calls
   * (grpc-load.ts, `url` `h2c://host:port[/prefix]`).
   */
  client?: { kind: 'h2'; caFile: string; sessions: number } | { kind: 'grpc' };
}

/** One load run and the CPU used meanwhile. */
interface Run<R> {
  result: R;
  cpu: CpuUse;
}

/** One round of one target. */
export interface Round {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU used during the round, in cores: by the benchmark's processes, and by other programs. */
  ownCores: number;
  otherCores: number;
}

/** A target's result over all its rounds. */
export interface Measurement {
  name: string;
  workers: number;
  connections: number;
  /** Offered rate, requests/s; null for a closed-loop (throughput) run. */
  rate: number | null;
  /** `autocannon`, `paced` (paced-load.ts), or a load-thread client: `node:http2` (http2-load.ts), `grpc-js` (grpc-load.ts). */
  tool: 'autocannon' | 'paced' | 'node:http2' | 'grpc-js';
  /** Measured time over all rounds, in s. */
  durationS: number;
  /** Responses per second over all rounds. */
  requestsPerSecond: number;
  /** Median over rounds of each round's percentile, in ms (autocannon: 1 ms resolution). */
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** Mean over rounds, in cores. */
  otherCores: number;
  /**
   * CPU time per response of each of the benchmark's processes busy during the rounds, by role
   * (load generator, upstream, baseline proxy, gateway proxy, gateway admin, redis-server), in µs.
   */
  cpuMicrosPerRequest: Record<string, number>;
  /** Rounds run again because other programs took too much CPU during them (the whole round, every target). */
  discardedRounds: number;
  /** Paced runs: share of requests the generator sent more than 2 ms late (0–1), mean over rounds. */
  generatorLateShare?: number;
  rounds: Round[];
}

/** A memory run: the serving process tree's memory while loaded (/proc, sampled every 200 ms). */
export interface MemoryMeasurement {
  name: string;
  workers: number;
  connections: number;
  /** Summed RSS of the process and its descendants just before the run (after earlier runs), in bytes. */
  beforeTreeRssBytes: number;
  /** Peak of the summed RSS during the run, in bytes. */
  peakTreeRssBytes: number;
  /** Peak of the summed PSS (shared pages split between the processes sharing them), in bytes. */
  peakTreePssBytes: number;
  /** Peak RSS of the largest single process of the tree (one proxy worker), in bytes. */
  peakProcessRssBytes: number;
  /** `process_resident_memory_bytes` from /metrics after the run (gateway only; split: workers only), in bytes. */
  metricsRssBytes: number | null;
  requestsPerSecond: number;
  p99Ms: number;
  otherCores: number;
}

/**
 * Closed-loop throughput of each target at `settings.connections`: a warm-up of each, then
 * `settings.rounds` rounds in which every target runs `durationS / rounds` seconds in turn.
 */
export async function measureThroughput(targets: Target[], settings: BenchSettings, ledger: ClientLedger): Promise<Measurement[]> {
  for (const target of targets) {
    await loadRun(target, { connections: settings.connections, durationS: settings.warmupS }, settings, ledger);
  }
  const roundS = settings.durationS / settings.rounds;
  const runs = targets.map(() => [] as Run<LoadResult>[]);
  let discarded = 0;
  for (let round = 0; round < settings.rounds; round++) {
    const attempt = await quietRound(settings, async () => {
      const inRound: Run<LoadResult>[] = [];
      for (const index of turnOrder(targets.length, round)) {
        inRound[index] = await loadRun(targets[index]!, { connections: settings.connections, durationS: roundS }, settings, ledger);
      }
      return inRound;
    });
    attempt.runs.forEach((run, index) => runs[index]!.push(run));
    discarded += attempt.discarded;
  }
  return targets.map((target, index) => combineLoad(target, settings.connections, null, runs[index]!, discarded));
}

/**
 * Each target at the same offered `rate` (requests/s), in interleaved rounds: first with
 * autocannon's `overallRate`, then with the evenly paced generator (after a paced warm-up of each,
 * which also warms the generator's own code).
 */
export async function measureFixedRate(targets: Target[], rate: number, settings: BenchSettings, ledger: ClientLedger): Promise<Measurement[]> {
  const roundS = settings.durationS / settings.rounds;
  const autocannonRuns = targets.map(() => [] as Run<LoadResult>[]);
  const pacedRuns = targets.map(() => [] as Run<PacedLoadResult>[]);
  for (const target of targets) {
    await pacedRun(target, { connections: settings.connections, durationS: settings.warmupS, rate }, ledger);
  }
  let discarded = 0;
  for (let round = 0; round < settings.rounds; round++) {
    const attempt = await quietRound(settings, async () => {
      const inRound: (Run<LoadResult> | Run<PacedLoadResult>)[] = [];
      for (const index of turnOrder(targets.length, round)) {
        inRound[index] = await loadRun(targets[index]!, { connections: settings.connections, durationS: roundS, rate }, settings, ledger);
      }
      for (const index of turnOrder(targets.length, round)) {
        inRound[targets.length + index] = await pacedRun(targets[index]!, { connections: settings.connections, durationS: roundS, rate }, ledger);
      }
      return inRound;
    });
    targets.forEach((_, index) => {
      autocannonRuns[index]!.push(attempt.runs[index] as Run<LoadResult>);
      pacedRuns[index]!.push(attempt.runs[targets.length + index] as Run<PacedLoadResult>);
    });
    discarded += attempt.discarded;
  }
  return [
    ...targets.map((target, index) => combineLoad(target, settings.connections, rate, autocannonRuns[index]!, discarded)),
    ...targets.map((target, index) => combinePaced(target, settings.connections, rate, pacedRuns[index]!, discarded)),
  ];
}

/**
 * Runs one round (every target once) once the machine is quiet (other programs using at most
 * `settings.maxOtherCores`, waiting up to `settings.quietWaitS`), and again while other programs
 * took more than that during any run of it, at most `settings.noisyRetries` more times; the last
 * attempt is kept either way.
 * @returns the kept attempt's runs, and how many attempts were discarded.
 */
async function quietRound<R extends Run<unknown>>(settings: BenchSettings, round: () => Promise<R[]>): Promise<{ runs: R[]; discarded: number }> {
  for (let discarded = 0; ; discarded++) {
    const quiet = await waitForQuietMachine(settings.maxOtherCores, settings.quietWaitS * 1000);
    if (quiet.waitedMs > 2_000) process.stdout.write(`    (waited ${Math.round(quiet.waitedMs / 1000)} s for other programs to settle: ${quiet.otherCores} cores)\n`);
    const runs = await round();
    const noisiest = Math.max(...runs.map((run) => run.cpu.otherCores));
    if (noisiest <= settings.maxOtherCores || discarded >= settings.noisyRetries) return { runs, discarded };
    process.stdout.write(`    (round repeated: other programs took ${noisiest} cores)\n`);
  }
}

/**
 * A closed-loop warm-up and run at `settings.rssConnections` (for `settings.durationS`), sampling
 * the memory of `pid`'s process tree throughout; `metricsRss` reads the gateway's own figure
 * afterwards.
 */
export async function measureMemory(
  target: Target,
  pid: number,
  settings: BenchSettings,
  ledger: ClientLedger,
  metricsRss?: () => Promise<number | undefined>,
): Promise<MemoryMeasurement> {
  await waitForQuietMachine(settings.maxOtherCores, settings.quietWaitS * 1000);
  const before = treeMemory(pid);
  const sampler = sampleTreeMemory(pid);
  await loadRun(target, { connections: settings.rssConnections, durationS: settings.warmupS }, settings, ledger);
  const { result, cpu } = await loadRun(target, { connections: settings.rssConnections, durationS: settings.durationS }, settings, ledger);
  const { peak } = sampler.stop();
  const fromMetrics = metricsRss ? await metricsRss().catch(() => undefined) : undefined;
  return {
    name: target.name,
    workers: target.workers,
    connections: settings.rssConnections,
    beforeTreeRssBytes: before.rssBytes,
    peakTreeRssBytes: peak.rssBytes,
    peakTreePssBytes: peak.pssBytes,
    peakProcessRssBytes: peak.largestRssBytes,
    metricsRssBytes: fromMetrics ?? null,
    requestsPerSecond: result.requestsPerSecond,
    p99Ms: result.latencyMs.p99,
    otherCores: cpu.otherCores,
  };
}

/**
 * One run of `target`, closed loop or at `run.rate` (autocannon only), with the CPU used
 * meanwhile; its answers go into the ledger when the target has an account.
 */
async function loadRun(
  target: Target,
  run: { connections: number; durationS: number; rate?: number },
  settings: BenchSettings,
  ledger: ClientLedger,
): Promise<Run<LoadResult>> {
  const before = readCpu();
  if (target.client && run.rate) throw new Error(`${target.name}: the load thread's clients run closed loops only`);
  const result = target.client
    ? await runInLoadThread(threadLoad(target, target.client, run))
    : await runLoad({
      url: target.url,
      connections: run.connections,
      durationS: run.durationS,
      workers: settings.loadWorkers,
      ...(run.rate ? { rate: run.rate } : {}),
      ...(target.headers ? { headers: target.headers } : {}),
    });
  const cpu = cpuBetween(before, readCpu());
  if (target.account) {
    const responses = result.responses2xx + result.responsesNon2xx;
    ledger.add(target.account.stack, target.account.serviceId, { responses, inFlightAtStop: Math.min(result.requestsSent - responses, run.connections) });
  }
  return { result, cpu };
}

/** The load-thread run of a target with a `client`, at `run.connections` streams or calls. */
function threadLoad(target: Target, client: NonNullable<Target['client']>, run: { connections: number; durationS: number }): ThreadLoad {
  if (client.kind === 'grpc') return { kind: 'grpc', options: { url: target.url, calls: run.connections, durationS: run.durationS } };
  return {
    kind: 'h2',
    options: { url: target.url, caFile: client.caFile, sessions: client.sessions, streams: run.connections, durationS: run.durationS, ...(target.headers ? { headers: target.headers } : {}) },
  };
}

async function pacedRun(
  target: Target,
  run: { connections: number; durationS: number; rate: number },
  ledger: ClientLedger,
): Promise<Run<PacedLoadResult>> {
  const before = readCpu();
  const result = await runPacedLoad({ url: target.url, connections: run.connections, durationS: run.durationS, rate: run.rate, ...(target.headers ? { headers: target.headers } : {}) });
  const cpu = cpuBetween(before, readCpu());
  if (target.account) {
    const responses = result.responses2xx + result.responsesNon2xx;
    ledger.add(target.account.stack, target.account.serviceId, { responses, inFlightAtStop: result.requestsSent - responses });
  }
  return { result, cpu };
}

function combineLoad(target: Target, connections: number, rate: number | null, runs: Run<LoadResult>[], discardedRounds: number): Measurement {
  const durationS = runs.reduce((sum, run) => sum + run.result.durationS, 0);
  const { responses, shared } = combineRuns(runs, discardedRounds);
  return {
    name: target.name,
    workers: target.workers,
    connections,
    rate,
    tool: !target.client ? 'autocannon' : target.client.kind === 'h2' ? 'node:http2' : 'grpc-js',
    durationS: round2(durationS),
    requestsPerSecond: Math.round(responses / durationS),
    ...shared,
  };
}

function combinePaced(target: Target, connections: number, rate: number, runs: Run<PacedLoadResult>[], discardedRounds: number): Measurement {
  const { shared } = combineRuns(runs, discardedRounds);
  return {
    name: target.name,
    workers: target.workers,
    connections,
    rate,
    tool: 'paced',
    durationS: round2(runs.reduce((sum, run) => sum + run.result.requestsSent, 0) / rate),
    requestsPerSecond: Math.round(mean(shared.rounds.map((r) => r.requestsPerSecond))),
    ...shared,
    generatorLateShare: mean(runs.map((run) => run.result.lateShare)),
  };
}

/** What both load generators' rounds of one target add up to: the responses counted, and the per-round figures, medians, totals and CPU of a {@link Measurement}. */
function combineRuns(runs: Run<LoadCounts>[], discardedRounds: number) {
  const rounds = runs.map(({ result, cpu }) => ({
    requestsPerSecond: result.requestsPerSecond,
    p50Ms: result.latencyMs.p50,
    p99Ms: result.latencyMs.p99,
    ownCores: cpu.ownCores,
    otherCores: cpu.otherCores,
  }));
  const responses = runs.reduce((sum, run) => sum + run.result.responses2xx + run.result.responsesNon2xx, 0);
  const shared = {
    cpuMicrosPerRequest: cpuPerRequest(runs.map((run) => run.cpu), responses),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    non2xx: runs.reduce((sum, run) => sum + run.result.responsesNon2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.result.errors, 0),
    otherCores: mean(rounds.map((r) => r.otherCores)),
    discardedRounds,
    rounds,
  };
  return { responses, shared };
}

/** CPU time per response by role over `uses`, in µs (roles under 0.5 µs left out). */
function cpuPerRequest(uses: CpuUse[], responses: number): Record<string, number> {
  const seconds: Record<string, number> = {};
  for (const use of uses) {
    for (const [role, cores] of Object.entries(use.byRole)) seconds[role] = (seconds[role] ?? 0) + cores * use.seconds;
  }
  const micros: Record<string, number> = {};
  for (const [role, used] of Object.entries(seconds).sort((a, b) => b[1] - a[1])) {
    const perRequest = responses ? (used / responses) * 1e6 : 0;
    if (perRequest >= 0.5) micros[role] = Math.round(perRequest * 10) / 10;
  }
  return micros;
}

/**
 * The order targets take turns in a round: as listed in even rounds, reversed in odd ones, so
 * that no target always runs right after another one's load (or always first).
 */
function turnOrder(count: number, round: number): number[] {
  const order = [...Array(count).keys()];
  return round % 2 === 0 ? order : order.reverse();
}

/** Median; the mean of the middle two for an even count. */
function median(values: number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return round2(sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2);
}

function mean(values: number[]): number {
  return values.length ? round2(values.reduce((sum, value) => sum + value, 0) / values.length) : 0;
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
