/**
 * Output of the benchmark: a line per measurement as it finishes, then the summary tables
 * (requests/s, p50, p99, ratios to the baseline at the same worker count), the access-log check
 * and the targets, and `bench/results/latest.json` with everything.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AccessLogCheck } from './access-log/access-log-check.js';
import type { AccessLogScaleResult } from './access-log/access-log-scale-result.js';
import type { AssertionCost } from './assertion-cost.js';
import type { Measurement, MemoryMeasurement } from './scenarios.js';
import type { MissingPeer } from './peers/peer.js';
import type { BenchSettings } from './settings.js';
import { mb, ROWS, signedMs, SYSTEM_ROLES, systemCpuMicros, systemOf, type RoutingMeasurement, type TargetResult } from './targets.js';

/** Where the latest run's results are written (gitignored). */
export const RESULTS_PATH = fileURLToPath(new URL('../../bench/results/latest.json', import.meta.url));

export interface BenchResults {
  /** ISO 8601. */
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; node: string; platform: string; loadAverageAtStart: number[] };
  settings: BenchSettings;
  /** Which gateway deployment was measured, and why. */
  mode: { used: 'embedded' | 'split'; note: string };
  throughput: Measurement[];
  fixedRate: Measurement[];
  memory: MemoryMeasurement[];
  routing: RoutingMeasurement[];
  accessLog: AccessLogCheck[];
  /** Reference peers that could not be started, and why. */
  missingPeers: MissingPeer[];
  /** The identity assertion's cost in the data plane (assertion-cost.ts); null until measured. */
  assertion: AssertionCost | null;
  /** The access-log scale scenario (access-log-scale.ts); null when it did not run. */
  accessLogScale: AccessLogScaleResult | null;
  targets: TargetResult[];
}

export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** One line per finished measurement. */
export function logMeasurement(m: Measurement): void {
  const rate = m.rate === null ? '' : ` @ ${fmt(m.rate)}/s ${m.tool}`;
  const rounds = m.rounds.map((r) => fmt(r.requestsPerSecond)).join(', ');
  const late = m.generatorLateShare === undefined ? '' : `, generator late ${(m.generatorLateShare * 100).toFixed(1)}%`;
  const repeated = m.discardedRounds ? `, ${m.discardedRounds} noisy round(s) repeated` : '';
  log(`  ${m.name} ×${m.workers}${rate}: ${fmt(m.requestsPerSecond)} req/s (rounds ${rounds}), p50 ${m.p50Ms} ms, p99 ${m.p99Ms} ms, non-2xx ${m.non2xx}, errors ${m.errors}, other programs ${m.otherCores} cores${late}${repeated}`);
}

export function logAssertionCost(cost: AssertionCost): void {
  log(`Identity assertion (in this process, before any load): ${cost.cachedMicros} µs per request when cached, ${cost.signMicros} µs for a new one`);
}

export function logMemory(m: MemoryMeasurement): void {
  const fromMetrics = m.metricsRssBytes === null ? '' : `, /metrics ${mb(m.metricsRssBytes)}`;
  log(`  ${m.name} ×${m.workers} @ ${m.connections} connections: RSS ${mb(m.beforeTreeRssBytes)} before, peak ${mb(m.peakTreeRssBytes)} (PSS ${mb(m.peakTreePssBytes)}; largest process ${mb(m.peakProcessRssBytes)})${fromMetrics}, ${fmt(m.requestsPerSecond)} req/s, p99 ${m.p99Ms} ms`);
}

/** The summary tables and the targets. */
export function printSummary(results: BenchResults): void {
  log('');
  log(`Gatehouse benchmark: ${results.machine.cpus} × ${results.machine.cpuModel}, Node ${results.machine.node}, gateway ${results.mode.used} mode (${results.mode.note})`);
  const s = results.settings;
  log(`${s.durationS} s per scenario in ${s.rounds} interleaved rounds, ${s.connections} connections, warm-up ${s.warmupS} s; a round is repeated (up to ${s.noisyRetries}×) when other programs take over ${s.maxOtherCores} cores during it`);

  log('\nThroughput (closed loop, as fast as responses come)');
  table(
    ['scenario', 'workers', 'req/s', 'p50 ms', 'p99 ms', '× baseline', 'other programs, cores'],
    results.throughput.map((m) => {
      const baseline = results.throughput.find((b) => b.name === ROWS.baseline && b.workers === m.workers);
      const ratio = baseline && m.name !== ROWS.upstream ? (m.requestsPerSecond / baseline.requestsPerSecond).toFixed(2) : '';
      return [m.name, String(m.workers), fmt(m.requestsPerSecond), String(m.p50Ms), String(m.p99Ms), ratio, String(m.otherCores)];
    }),
  );

  const roles = [...new Set(results.throughput.flatMap((m) => Object.keys(m.cpuMicrosPerRequest)))];
  log('\nCPU time per request by process, throughput runs (µs; /proc; the machine has ' + results.machine.cpus + ' cores for all of them)');
  table(
    ['scenario', 'workers', ...roles, 'total'],
    results.throughput.map((m) => [
      m.name,
      String(m.workers),
      ...roles.map((role) => (m.cpuMicrosPerRequest[role] === undefined ? '' : m.cpuMicrosPerRequest[role]!.toFixed(1))),
      Object.values(m.cpuMicrosPerRequest).reduce((sum, value) => sum + value, 0).toFixed(1),
    ]),
  );

  printCostPerRequest(results);
  printProtocolRows(results);

  if (results.fixedRate.length > 0) {
    log('\nFixed rate: half the gateway protected route\'s maximum, the same offered rate for both');
    table(
      ['scenario', 'workers', 'generator', 'rate/s', 'req/s', 'p50 ms', 'p99 ms', 'p99 − baseline', 'other programs, cores'],
      results.fixedRate.map((m) => {
        const baseline = results.fixedRate.find((b) => b.name === ROWS.baseline && b.workers === m.workers && b.tool === m.tool && b.rate === m.rate);
        const excess = baseline && m.name !== ROWS.baseline ? signedMs(m.p99Ms - baseline.p99Ms) : '';
        return [m.name, String(m.workers), m.tool, fmt(m.rate ?? 0), fmt(m.requestsPerSecond), String(m.p50Ms), String(m.p99Ms), excess, String(m.otherCores)];
      }),
    );
  }

  if (results.memory.length > 0) {
    log('\nMemory (the serving process and its children summed, /proc smaps_rollup; /metrics: the gateway\'s process_resident_memory_bytes)');
    table(
      ['scenario', 'workers', 'connections', 'RSS before', 'peak RSS', 'peak PSS', 'largest process', '/metrics RSS', 'req/s', 'p99 ms'],
      results.memory.map((m) => [m.name, String(m.workers), String(m.connections), mb(m.beforeTreeRssBytes), mb(m.peakTreeRssBytes), mb(m.peakTreePssBytes), mb(m.peakProcessRssBytes), m.metricsRssBytes === null ? '' : mb(m.metricsRssBytes), fmt(m.requestsPerSecond), String(m.p99Ms)]),
    );
  }

  if (results.routing.length > 0) {
    log('\nRouting scale (same route, interleaved rounds)');
    table(
      ['scenario', 'workers', 'req/s', 'rounds', 'p50 ms', 'p99 ms', 'other programs, cores'],
      results.routing.map(({ measurement: m }) => [m.name, String(m.workers), fmt(m.requestsPerSecond), m.rounds.map((r) => fmt(r.requestsPerSecond)).join(', '), String(m.p50Ms), String(m.p99Ms), String(m.otherCores)]),
    );
  }

  if (results.accessLog.length > 0) {
    log('\nAccess-log check (responses ≤ stored ≤ responses + in flight at stops; stored = the gateway\'s served count from /metrics)');
    table(
      ['stack', 'service', 'responses', 'in flight at stops (max)', 'served', 'stored', 'stored − responses', 'result'],
      results.accessLog.map((c) => [c.stack, c.service, fmt(c.responses), fmt(c.inFlightAtStop), c.served === null ? 'n/a' : fmt(c.served), fmt(c.stored), String(c.cutOffAtStop), c.pass ? 'PASS' : 'FAIL']),
    );
    for (const error of new Set(results.accessLog.flatMap((c) => (c.servedError ? [c.servedError] : [])))) {
      log(`  served n/a: ${error} (checked against the clients' counts only)`);
    }
  }

  if (results.assertion) {
    log('\nIdentity assertion (X-Gatehouse-Assertion): event-loop time in the data plane, measured before any load');
    table(
      ['case', 'µs'],
      [
        ['cached (the same caller and service within ASSERTION_TTL − 1 min)', String(results.assertion.cachedMicros)],
        ['new (one ES256 signature, once per caller and service and period)', String(results.assertion.signMicros)],
      ],
    );
  }

  if (results.accessLogScale) printAccessLogScale(results.accessLogScale);

  log('\nTargets');
  for (const t of results.targets) {
    log(`  ${t.pass ? 'PASS' : 'FAIL'}  ${t.target}${t.workers === null ? '' : ` (${t.workers} worker${t.workers === 1 ? '' : 's'})`}: ${t.detail}`);
  }
  log(`\nResults written to ${RESULTS_PATH}`);
}

/**
 * Every system side by side on the protected route (the gateway's public rows too): requests/s,
 * latency, and the CPU per response of that system's own processes, the gateway's split into
 * proxy, admin and Redis, with the multiple of the baseline's at the same worker count.
 */
function printCostPerRequest(results: BenchResults): void {
  log('\nCost per request: each system\'s own processes (CPU µs per response, user + system, /proc)');
  const rows = results.throughput.filter((m) => systemOf(m.name) !== undefined);
  const role = (m: Measurement, name: string) => (m.cpuMicrosPerRequest[name] === undefined ? '' : m.cpuMicrosPerRequest[name]!.toFixed(1));
  table(
    ['system', 'workers', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs', 'of it proxy / admin / Redis', '× baseline CPU'],
    rows.map((m) => {
      const baseline = rows.find((b) => b.name === ROWS.baseline && b.workers === m.workers);
      const cpu = systemCpuMicros(m)!;
      const split = systemOf(m.name) === 'gateway' ? [role(m, 'gateway proxy'), role(m, 'gateway admin'), role(m, 'redis-server')].join(' / ') : '';
      const ratio = baseline ? (cpu / systemCpuMicros(baseline)!).toFixed(2) : '';
      return [m.name, String(m.workers), fmt(m.requestsPerSecond), String(m.p50Ms), String(m.p99Ms), cpu.toFixed(1), split, ratio];
    }),
  );
  for (const peer of results.missingPeers) log(`  not measured: ${peer.name}: ${peer.reason}`);
}

/**
 * The h2 and gRPC rows (run.ts `measureTls`, `measureGrpc`) against their references in the same
 * run: CPU µs per response of the data plane alone (the gateway's proxy process or the embedded
 * gateway; Caddy), of the whole system (systemCpuMicros), and of the target behind it (the bench
 * upstream, or the gRPC target), with req/s.
 */
function printProtocolRows(results: BenchResults): void {
  const pairs: [string, string][] = [
    [ROWS.protectedH2, ROWS.protectedHttps],
    [ROWS.embedded(ROWS.protectedH2), ROWS.embedded(ROWS.protectedHttps)],
    [ROWS.protectedH2, ROWS.caddyH2],
    [ROWS.embedded(ROWS.protectedH2), ROWS.caddyH2],
    [ROWS.caddyH2, ROWS.caddyHttps],
    [ROWS.grpcGateway, ROWS.grpcDirect],
    [ROWS.embedded(ROWS.grpcGateway), ROWS.grpcDirect],
  ];
  const row = (name: string) => results.throughput.find((m) => m.name === name && m.workers === 1);
  const found = pairs.flatMap(([name, of]) => {
    const [measured, reference] = [row(name), row(of)];
    return measured && reference ? [{ measured, reference }] : [];
  });
  if (found.length === 0) return;
  log('\nHTTP/2 and gRPC, 1 worker (CPU µs per response: the data plane alone, the whole system, the target behind it)');
  // A direct row has no system in front of its target: its cells are left empty.
  const micros = (value: number | undefined) => (value === undefined ? '' : value.toFixed(1));
  const cells = (m: Measurement) => {
    const system = systemOf(m.name);
    const role = system && DATA_PLANE_ROLE[system];
    const dataPlane = role ? (m.cpuMicrosPerRequest[role] ?? 0) : undefined;
    const target = TARGET_ROLES.reduce((sum, role) => sum + (m.cpuMicrosPerRequest[role] ?? 0), 0);
    return { rate: m.requestsPerSecond, dataPlane: micros(dataPlane), system: micros(systemCpuMicros(m)), target: micros(target) };
  };
  table(
    ['row', 'against', 'req/s', 'against req/s', 'req/s ratio', 'data plane µs', 'against', 'system µs', 'against', 'target µs', 'against'],
    found.map(({ measured, reference }) => {
      const [a, b] = [cells(measured), cells(reference)];
      return [measured.name, reference.name, fmt(a.rate), fmt(b.rate), (a.rate / b.rate).toFixed(2), a.dataPlane, b.dataPlane, a.system, b.system, a.target, b.target];
    }),
  );
}

/**
 * The process that serves a request in front of the target, by system: a gateway's data plane
 * (not its admin or Redis), Caddy. By the row's own system, since the other system of a pair is
 * alive and idle during its rounds.
 */
const DATA_PLANE_ROLE: Partial<Record<keyof typeof SYSTEM_ROLES, string>> = { gateway: 'gateway proxy', embedded: 'embedded gateway', caddy: 'caddy' };
/** The roles a request ends at: the bench upstream, the gRPC target. */
const TARGET_ROLES = ['upstream', 'grpc target'];

/** The access-log scale scenario's tables: fills, reads, the proxied load with and without a polling console, retention, the export's cost. */
export function printAccessLogScale(scale: AccessLogScaleResult): void {
  const [small, big] = scale.gateways;
  if (!small || !big) return;
  log(`\nAccess-log scale (embedded gateways, records over ${scale.settings.days} days; scenario ${scale.wallSeconds} s)`);
  table(
    ['gateway', 'records', 'shipped batches', 'fill s', 'records/s (wall)', 'store records/s per process', 'day files', 'bytes on disk', 'bytes per record'],
    scale.gateways.map(({ name, fill }) => [name, fmt(fill.records), fmt(fill.batches), String(fill.seconds), fmt(fill.wallPerSecond), fill.parts.map((p) => fmt(p.storePerSecond)).join(' + '), String(fill.dayFiles), mb(fill.bytes), String(fill.bytesPerRecord)]),
  );
  log(`\nAdmin reads (median of ${scale.settings.readRepeats}, ms; first: the first request, day files not yet open)`);
  table(
    ['read', `${small.name} median`, 'first', `${big.name} median`, 'p90', 'first', 'ratio', `total (${big.name})`],
    scale.reads.map((read) => {
      const s = read.times[small.name]!;
      const b = read.times[big.name]!;
      const total = b.total === null ? '' : `${fmt(b.total)}${b.partial ? ' (partial)' : ''}`;
      return [read.name, String(s.medianMs), String(s.firstMs), String(b.medianMs), String(b.p90Ms), String(b.firstMs), `${(b.medianMs / s.medianMs).toFixed(2)}×`, total];
    }),
  );
  log(`\nProxied load on ${big.name} (paced ${fmt(scale.polling.rate)} req/s, ${scale.polling.durationS} s per run; polling: the API's newest page and the console page every ${scale.polling.intervalMs} ms)`);
  table(
    ['run', 'console', 'p50 ms', 'p99 ms', 'max ms', 'non-2xx', 'errors', 'console reads', 'read median / max ms', 'gateway, cores', 'other programs, cores', 'generator late', 'noisy runs repeated'],
    scale.polling.runs.map((run, i) => [
      String(i + 1), run.polling ? 'polling' : 'idle', String(run.load.latencyMs.p50), String(run.load.latencyMs.p99), String(run.load.latencyMs.max),
      fmt(run.load.responsesNon2xx), fmt(run.load.errors), run.poll ? fmt(run.poll.reads) : '', run.poll ? `${run.poll.medianMs} / ${run.poll.maxMs}` : '',
      String(run.gatewayCores), String(run.otherCores), `${(run.load.lateShare * 100).toFixed(1)}%`, String(run.discarded),
    ]),
  );
  const drop = scale.dayDrop;
  log(`\nRetention: deleting the oldest day (${drop.day}: ${fmt(drop.records)} records, ${mb(drop.bytes)}) took ${drop.ms} ms (AccessLogStore.enforceLimits, ${drop.daysBefore} → ${drop.daysAfter} day files)`);
  const cost = scale.exportCost;
  log(`\nAdmin CPU per stored record (µs, the writer process's threads; ${fmt(cost.options.records)} records per run in calls of ${cost.options.batch}, runs alternating)`);
  table(
    ['run', 'export', 'stored', 'exported', 'export dropped', 's', 'CPU µs per record', 'other programs, cores'],
    cost.runs.map((run, i) => [String(i + 1), run.export ? 'OTLP' : 'none', fmt(run.stored), fmt(run.exported), fmt(run.exportDropped), String(run.seconds), String(run.cpuMicrosPerRecord), String(run.otherCores)]),
  );
  log(`  median: ${cost.withoutMicros} µs without, ${cost.withMicros} µs with the export (+${cost.exportMicros} µs)`);
}

/** Writes the access-log scale scenario's results alone (a run of access-log-scale.js); returns the path. */
export function writeAccessLogScaleResults(scale: AccessLogScaleResult): string {
  const path = join(dirname(RESULTS_PATH), 'access-log-scale.json');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(scale, null, 2)}\n`);
  return path;
}

export function writeResults(results: BenchResults): void {
  mkdirSync(dirname(RESULTS_PATH), { recursive: true });
  writeFileSync(RESULTS_PATH, `${JSON.stringify(results, null, 2)}\n`);
}

function table(header: string[], rows: string[][]): void {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: string[]) => `  ${cells.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')}`;
  log(line(header));
  for (const row of rows) log(line(row));
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}
