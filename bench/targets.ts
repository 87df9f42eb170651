/**
 * The speed targets of bench/README.md, each a ratio or difference within the same run, judged
 * PASS or FAIL with the numbers it was judged on.
 */
import type { AccessLogCheck } from './access-log/access-log-check.js';
import type { AccessLogScaleResult } from './access-log/access-log-scale-result.js';
import { APACHE_REDIS_ROLE } from './process-stats.js';
import type { Measurement, MemoryMeasurement } from './scenarios.js';

/** The speed targets, each a ratio or difference within one run (bench/README.md). */
const LIMITS = {
  /** Protected route's requests/s over the baseline's, same worker count: at least this. */
  minThroughputRatio: 0.8,
  /** p99 at half the maximum rate: at most this many ms above the baseline's. */
  maxP99ExcessMs: 2,
  /** Data-plane resident memory at the memory run's connection count, in bytes (150 MB, decimal: the stricter reading). */
  maxProxyRssBytes: 150_000_000,
  /** Routing with many services: requests/s at least this share of routing with few. */
  minRoutingRatio: 0.95,
  /** The protected route with an access policy: requests/s at least this share of the protected route's. */
  minPolicyRatio: 0.97,
  /** The protected route with 16 rules none matches (seed.ts): requests/s at least this share of the protected route's (no rules). */
  minRulesRatio: 0.97,
  /** The public route over a pool of three targets: requests/s at least this share of the one-target public route's. */
  minPoolRatio: 0.97,
  /** The same pool: CPU per request (whole gateway) at most this multiple of the one-target public route's. */
  maxPoolCpuRatio: 1.03,
  /** The protected route's CPU per request, whole gateway (proxy + admin + Redis): at most this multiple of the baseline's. */
  maxCpuRatio: 1.25,
  /** The protected route's requests/s: at least these multiples of each peer's (same worker count). */
  minPeerRatios: { caddy: 1.0, apache: 3 },
  /** Access-log scale: each admin read's median time with the big log at most this multiple of the small log's. */
  maxAccessLogReadRatio: 1.5,
  /** Access-log scale: the slowest proxied request while a console polls at most this many ms above the slowest idle one. */
  maxPollingMaxExcessMs: 20,
  /** Access-log scale: bytes on disk per stored record (day files, checkpointed) at most this. */
  maxBytesPerRecord: 120,
} as const;

export interface TargetResult {
  target: string;
  /** Worker count it applies to; null when not per worker count. */
  workers: number | null;
  pass: boolean;
  /** The numbers, as printed. */
  detail: string;
}

/** Row names shared by the orchestrator and the targets. */
export const ROWS = {
  upstream: 'upstream direct',
  baseline: 'baseline proxy',
  public: 'gateway public',
  protected: 'gateway protected',
  policy: 'gateway protected, policy',
  /** The protected route with 16 rules, every one compared and none matching (seed.ts `BENCH_RULES`). */
  rules: 'gateway protected, 16 rules',
  /** The public route over a pool of three targets (round robin). */
  pool: 'gateway public, 3-target pool',
  /** Caddy's `reverse_proxy` (caddy-peer.ts). */
  caddy: 'caddy',
  /** The TLS row (run.ts): the protected route over HTTPS with keep-alive, and Caddy with the same certificate. */
  protectedHttps: 'gateway protected, https',
  caddyHttps: 'caddy, https',
  /** The h2 rows (run.ts): the TLS row's gateway and Caddy loaded over HTTP/2 (http2-load.ts). */
  protectedH2: 'gateway protected, h2',
  caddyH2: 'caddy, h2',
  /** The gRPC rows (run.ts): unary calls (grpc-load.ts) to the grpc-js target itself, and through a gateway's public `/grpc` service. */
  grpcDirect: 'grpc target direct',
  grpcGateway: 'gateway grpc unary',
  /** Apache httpd + mod_auth_openidc, sessions in Redis (apache-openidc-peer.ts). */
  apache: 'apache + mod_auth_openidc',
  /** A row of the embedded gateway, e.g. `embedded gateway protected` (the others are split mode's). */
  embedded: (row: string) => `embedded ${row}`,
  /** The routing-scale rows: the public route with `count` services registered. */
  routing: (count: number) => `gateway public (${count.toLocaleString('en-US')} services)`,
} as const;

/**
 * The processes that are each system, by their roles in the CPU table (process-stats.ts): what a
 * system's CPU per request sums. Rows `gateway …` are split mode's three processes, rows
 * `embedded gateway …` the embedded gateway's one.
 */
export const SYSTEM_ROLES = {
  baseline: ['baseline proxy'],
  gateway: ['gateway proxy', 'gateway admin', 'redis-server'],
  embedded: ['embedded gateway'],
  caddy: ['caddy'],
  apache: ['apache httpd', APACHE_REDIS_ROLE],
} as const;

/** The system a throughput row measures, or undefined (the upstream alone). */
export function systemOf(row: string): keyof typeof SYSTEM_ROLES | undefined {
  if (row === ROWS.baseline) return 'baseline';
  if (row === ROWS.caddy || row === ROWS.caddyHttps || row === ROWS.caddyH2) return 'caddy';
  if (row === ROWS.apache) return 'apache';
  if (row.startsWith(ROWS.embedded('gateway'))) return 'embedded';
  return row.startsWith('gateway') ? 'gateway' : undefined;
}

/** CPU µs per response of `m`'s system's own processes (user + system, /proc), or undefined for no system. */
export function systemCpuMicros(m: Measurement): number | undefined {
  const system = systemOf(m.name);
  if (system === undefined) return undefined;
  return SYSTEM_ROLES[system].reduce((sum, role) => sum + (m.cpuMicrosPerRequest[role] ?? 0), 0);
}

/** A routing-scale measurement and the number of services registered during it. */
export interface RoutingMeasurement {
  services: number;
  measurement: Measurement;
}

export interface TargetInputs {
  throughput: Measurement[];
  fixedRate: Measurement[];
  memory: MemoryMeasurement[];
  /** Few services first, then many. */
  routing: RoutingMeasurement[];
  accessLog: AccessLogCheck[];
  /** The access-log scale scenario (access-log-scale.ts), when it ran. */
  accessLogScale?: AccessLogScaleResult | null;
}

/** The gateways a run may measure: split mode's (rows `gateway …`) and the embedded one (rows `embedded gateway …`). */
const GATEWAYS: { label: string; row: (row: string) => string }[] = [
  { label: '', row: (row) => row },
  { label: ' (embedded)', row: (row) => ROWS.embedded(row) },
];

/** Judges every target the inputs allow (a target without its measurements is left out). */
export function evaluateTargets(inputs: TargetInputs): TargetResult[] {
  const workerCounts = [...new Set(inputs.throughput.map((m) => m.workers))].sort((a, b) => a - b);
  const results = GATEWAYS.flatMap((gateway) => workerCounts.flatMap((workers) => gatewayTargets(inputs, workers, gateway.row, gateway.label)));
  for (const gateway of GATEWAYS) {
    for (const memory of inputs.memory.filter((m) => m.name === gateway.row(ROWS.protected))) {
      const fromMetrics = memory.metricsRssBytes === null ? '' : `; /metrics process_resident_memory_bytes ${mb(memory.metricsRssBytes)}`;
      results.push({
        target: `proxy RSS ≤ ${mb(LIMITS.maxProxyRssBytes)} at ${memory.connections} connections${gateway.label}`,
        workers: memory.workers,
        // Per proxy process: the unit that scales out. Summed over a node:cluster primary and its
        // workers, every process counts Node's shared code again (the bare baseline sums to ~290 MB
        // with 2 workers), so the sum is reported beside it, not judged.
        pass: memory.peakProcessRssBytes <= LIMITS.maxProxyRssBytes,
        detail: `peak RSS of the largest proxy process ${mb(memory.peakProcessRssBytes)}; of all proxy processes summed ${mb(memory.peakTreeRssBytes)} (PSS ${mb(memory.peakTreePssBytes)})${fromMetrics}`,
      });
    }
  }

  const [few, many] = inputs.routing;
  if (few && many) {
    const ratio = many.measurement.requestsPerSecond / few.measurement.requestsPerSecond;
    results.push({
      target: `${fmt(many.services)} services route within ${Math.round((1 - LIMITS.minRoutingRatio) * 100)}% of ${fmt(few.services)} (req/s)`,
      workers: many.measurement.workers,
      pass: ratio >= LIMITS.minRoutingRatio,
      detail: `${fmt(many.measurement.requestsPerSecond)} / ${fmt(few.measurement.requestsPerSecond)} req/s = ${ratio.toFixed(3)}×`,
    });
  }

  if (inputs.accessLog.length > 0) {
    const failed = inputs.accessLog.filter((check) => !check.pass);
    results.push({
      target: 'access-log records stored = requests served',
      workers: null,
      pass: failed.length === 0,
      detail: failed.length === 0
        ? `${inputs.accessLog.length} services checked, ${fmt(inputs.accessLog.reduce((sum, c) => sum + c.stored, 0))} records${inputs.accessLog.some((c) => c.served === null) ? ' (some without the gateway\'s served count: /metrics unavailable)' : ''}`
        : failed.map((c) => `${c.stack} ${c.service}: stored ${c.stored}, served ${c.served}, responses ${c.responses} (+ at most ${c.inFlightAtStop} in flight at stops)`).join('; '),
    });
  }
  if (inputs.accessLogScale) results.push(...accessLogScaleTargets(inputs.accessLogScale));
  return results;
}

/**
 * The access-log scale targets: each admin read's median with the big log against the small
 * log's, the slowest proxied request while a console polls against idle (the worst run of each),
 * and the big log's bytes per record on disk.
 */
export function accessLogScaleTargets(scale: AccessLogScaleResult): TargetResult[] {
  const [small, big] = scale.gateways;
  if (!small || !big) return [];
  const label = (n: number) => (n >= 1e6 ? `${+(n / 1e6).toFixed(1)} M` : `${fmt(n / 1e3)} k`);
  const sizes = `${label(big.fill.records)} records vs ${label(small.fill.records)}`;
  const results: TargetResult[] = scale.reads.map((read) => {
    const s = read.times[small.name]!;
    const b = read.times[big.name]!;
    const ratio = b.medianMs / s.medianMs;
    return {
      target: `access-log read "${read.name}" ≤ ${LIMITS.maxAccessLogReadRatio}× (median, ${sizes})`,
      workers: null,
      pass: ratio <= LIMITS.maxAccessLogReadRatio,
      detail: `${b.medianMs} / ${s.medianMs} ms = ${ratio.toFixed(2)}×`,
    };
  });
  const idle = scale.polling.runs.filter((run) => !run.polling);
  const polling = scale.polling.runs.filter((run) => run.polling);
  if (idle.length > 0 && polling.length > 0) {
    const worst = (runs: typeof idle, key: 'max' | 'p99') => Math.max(...runs.map((run) => run.load.latencyMs[key]));
    const excess = worst(polling, 'max') - worst(idle, 'max');
    results.push({
      target: `slowest proxied request while a console polls every ${scale.polling.intervalMs} ms ≤ idle + ${LIMITS.maxPollingMaxExcessMs} ms (${label(big.fill.records)} records, ${fmt(scale.polling.rate)} req/s)`,
      workers: null,
      pass: excess <= LIMITS.maxPollingMaxExcessMs,
      detail: `max ${worst(polling, 'max')} ms polling, ${worst(idle, 'max')} ms idle, ${signedMs(excess)}; p99 ${worst(polling, 'p99')} vs ${worst(idle, 'p99')} ms`,
    });
  }
  results.push({
    target: `access log ≤ ${LIMITS.maxBytesPerRecord} bytes per record on disk (${label(big.fill.records)} records)`,
    workers: null,
    pass: big.fill.bytesPerRecord <= LIMITS.maxBytesPerRecord,
    detail: `${big.fill.bytesPerRecord} bytes (${mb(big.fill.bytes)} in ${big.fill.dayFiles} day files); ${small.fill.bytesPerRecord} bytes with ${label(small.fill.records)} records`,
  });
  return results;
}

/**
 * The targets of one gateway (`row` names its rows, `label` its targets) at `workers`: throughput
 * against the baseline and the peers, CPU per request, the access policy's and the rules' cost, p99 at a fixed rate.
 */
function gatewayTargets(inputs: TargetInputs, workers: number, row: (name: string) => string, label: string): TargetResult[] {
  const results: TargetResult[] = [];
  const protectedRow = row(ROWS.protected);
  const push = (target: string, pass: boolean, detail: string) => results.push({ target: `${target}${label}`, workers, pass, detail });

  const toBaseline = throughputRatio(inputs, workers, protectedRow, ROWS.baseline, 2);
  if (toBaseline) push(`protected route ≥ ${LIMITS.minThroughputRatio}× baseline req/s`, toBaseline.ratio >= LIMITS.minThroughputRatio, toBaseline.detail);

  const gateway = find(inputs.throughput, protectedRow, workers);
  const baseline = find(inputs.throughput, ROWS.baseline, workers);
  const gatewayCpu = gateway && systemCpuMicros(gateway);
  const baselineCpu = baseline && systemCpuMicros(baseline);
  if (gatewayCpu && baselineCpu) {
    const ratio = gatewayCpu / baselineCpu;
    push(`protected route CPU per request (whole gateway) ≤ ${LIMITS.maxCpuRatio}× baseline`, ratio <= LIMITS.maxCpuRatio, `${gatewayCpu.toFixed(1)} / ${baselineCpu.toFixed(1)} µs = ${ratio.toFixed(2)}×`);
  }
  for (const [peer, minimum] of Object.entries(LIMITS.minPeerRatios) as [keyof typeof LIMITS.minPeerRatios, number][]) {
    const toPeer = throughputRatio(inputs, workers, protectedRow, ROWS[peer], 2);
    if (toPeer) push(`protected route ≥ ${minimum}× ${ROWS[peer]} req/s`, toPeer.ratio >= minimum, toPeer.detail);
  }

  const pool = throughputRatio(inputs, workers, row(ROWS.pool), row(ROWS.public), 3);
  if (pool) push(`public route over a 3-target pool within ${Math.round((1 - LIMITS.minPoolRatio) * 100)}% of one target (req/s)`, pool.ratio >= LIMITS.minPoolRatio, pool.detail);
  const poolRow = find(inputs.throughput, row(ROWS.pool), workers);
  const oneTargetRow = find(inputs.throughput, row(ROWS.public), workers);
  const measured = poolRow && systemCpuMicros(poolRow);
  const reference = oneTargetRow && systemCpuMicros(oneTargetRow);
  if (measured && reference) {
    const ratio = measured / reference;
    push(`public route over a 3-target pool: CPU per request ≤ ${LIMITS.maxPoolCpuRatio}× one target's`, ratio <= LIMITS.maxPoolCpuRatio, `${measured.toFixed(1)} / ${reference.toFixed(1)} µs = ${ratio.toFixed(3)}×`);
  }
  const policy = throughputRatio(inputs, workers, row(ROWS.policy), protectedRow, 3);
  if (policy) push(`protected route with an access policy within ${Math.round((1 - LIMITS.minPolicyRatio) * 100)}% of protected (req/s)`, policy.ratio >= LIMITS.minPolicyRatio, policy.detail);
  const rules = throughputRatio(inputs, workers, row(ROWS.rules), protectedRow, 3);
  if (rules) push(`protected route with 16 rules within ${Math.round((1 - LIMITS.minRulesRatio) * 100)}% of protected without (req/s)`, rules.ratio >= LIMITS.minRulesRatio, rules.detail);

  for (const tool of ['autocannon', 'paced'] as const) {
    const measured = inputs.fixedRate.find((m) => m.name === protectedRow && m.workers === workers && m.tool === tool);
    const reference = measured && inputs.fixedRate.find((m) => m.name === ROWS.baseline && m.workers === workers && m.tool === tool && m.rate === measured.rate);
    if (!measured || !reference) continue;
    const excess = measured.p99Ms - reference.p99Ms;
    push(
      `p99 at half max rate ≤ baseline + ${LIMITS.maxP99ExcessMs} ms (${tool === 'paced' ? 'evenly paced' : 'autocannon overallRate, bursty'})`,
      excess <= LIMITS.maxP99ExcessMs,
      `${fmt(measured.rate ?? 0)} req/s: gateway p99 ${measured.p99Ms} ms, baseline p99 ${reference.p99Ms} ms, ${signedMs(excess)}`,
    );
  }
  return results;
}

/**
 * Row `name`'s req/s over row `of`'s at `workers`, and how it was reached (`digits` after the
 * point); undefined when either row is missing.
 */
function throughputRatio(inputs: TargetInputs, workers: number, name: string, of: string, digits: number): { ratio: number; detail: string } | undefined {
  const measured = find(inputs.throughput, name, workers);
  const reference = find(inputs.throughput, of, workers);
  if (!measured || !reference) return undefined;
  const ratio = measured.requestsPerSecond / reference.requestsPerSecond;
  return { ratio, detail: `${fmt(measured.requestsPerSecond)} / ${fmt(reference.requestsPerSecond)} req/s = ${ratio.toFixed(digits)}×` };
}

function find(list: Measurement[], name: string, workers: number): Measurement | undefined {
  return list.find((m) => m.name === name && m.workers === workers);
}

/** A difference in ms with its sign, e.g. `+1.50 ms`, `-0.20 ms`. */
export function signedMs(value: number): string {
  return `${value >= 0 ? '+' : '-'}${Math.abs(value).toFixed(2)} ms`;
}

function fmt(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/** Bytes as decimal megabytes, e.g. `123.4 MB`. */
export function mb(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
