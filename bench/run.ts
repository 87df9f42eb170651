/**
 * `npm run bench`: measures, in one run on this machine, the identity assertion's cost in the
 * data plane (assertion-cost.ts), the upstream directly, the baseline proxy, and the gateway's
 * public, protected and protected-with-policy routes at each worker count (and, at 1 worker, the
 * protected route over HTTPS, HTTP/1.1 and h2, against Caddy with the same certificate, and gRPC
 * unary calls through the gateway against the gRPC target directly); the latency at a fixed
 * rate, the data plane's memory under many connections, and routing with many services; then
 * checks the access logs, runs the access-log scale scenario (access-log-scale.ts), and judges the
 * targets (targets.ts). Every server runs in its own child process; the load generators run
 * here (autocannon) or in a worker thread of this process (HTTP/2 and gRPC: load-thread.ts).
 * Settings: settings.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkAccessLog, ClientLedger, type AccessLogCheck } from './access-log/access-log-check.js';
import { measureAccessLogScale, readScaleSettings } from './access-log/access-log-scale.js';
import { measureAssertionCost } from './assertion-cost.js';
import { splitModeAvailability, startGatewayStack, type GatewayStack, type StackMode, type StackOptions } from './gateway-stack.js';
import { startApacheOpenidc } from './peers/apache-openidc-peer.js';
import { startCaddy } from './peers/caddy-peer.js';
import type { MissingPeer, Peer } from './peers/peer.js';
import { startBaselineProxy, startBenchUpstream, startGrpcTargetProcess, type ReferenceServer } from './reference-servers.js';
import { log, logAssertionCost, logMeasurement, logMemory, printSummary, writeResults, type BenchResults } from './report.js';
import { measureFixedRate, measureMemory, measureThroughput, type Target } from './scenarios.js';
import { readSettings, type BenchSettings } from './settings.js';
import { evaluateTargets, ROWS } from './targets.js';
import { makeBenchCertificate } from './tls-certificate.js';
import type { Service } from '../shared/types.js';

/** Path every target is requested at, below its prefix (the upstream answers any path). */
const REQUEST_PATH = '/bench';

/** TLS connections the h2 rows' `BENCH_CONNECTIONS` streams share (a few, as browsers and gRPC clients open). */
const H2_SESSIONS = 4;

async function main(): Promise<void> {
  const settings = readSettings();
  const scaleSettings = readScaleSettings();
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-'));
  const ledger = new ClientLedger();
  const results: BenchResults = {
    startedAt: new Date().toISOString(),
    finishedAt: '',
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, platform: process.platform, loadAverageAtStart: loadavg().map((n) => Math.round(n * 100) / 100) },
    settings,
    mode: { used: 'embedded', note: '' },
    throughput: [],
    fixedRate: [],
    memory: [],
    routing: [],
    accessLog: [],
    missingPeers: [],
    assertion: null,
    accessLogScale: null,
    targets: [],
  };
  log(`Gatehouse benchmark; logs and databases in ${workDir}`);

  const mode = await chooseMode(settings, workDir);
  results.mode = mode;
  log(`Gateway: ${mode.used} mode (${mode.note})`);
  results.assertion = await measureAssertionCost();
  logAssertionCost(results.assertion);

  const upstream = await startBenchUpstream(workDir);
  const upstreamTarget: Target = { name: ROWS.upstream, workers: 1, url: `${upstream.url}${REQUEST_PATH}` };

  for (const [index, workers] of settings.workerCounts.entries()) {
    log(`\n${workers} worker${workers === 1 ? '' : 's'}`);
    const baseline = await startBaselineProxy(workers, upstream.url, workDir);
    const baselineTarget: Target = { name: ROWS.baseline, workers, url: `${baseline.url}${REQUEST_PATH}` };
    const stack = mode.used === 'split' || workers === 1
      ? await startStack({ name: `gateway-${mode.used}-${workers}w`, mode: mode.used, workers, services: settings.fewServices, upstreamUrl: upstream.url, poolUrls: upstream.poolUrls, workDir }, ledger)
      : undefined;
    if (!stack) log(`  (no gateway at ${workers} workers: embedded mode has one process)`);
    // With split mode measured, the embedded gateway (one process) is measured beside it at 1 worker.
    const embedded = mode.used === 'split' && workers === 1
      ? await startStack({ name: 'gateway-embedded-1w', mode: 'embedded', workers: 1, services: settings.fewServices, upstreamUrl: upstream.url, poolUrls: upstream.poolUrls, workDir }, ledger)
      : undefined;
    const gateways = [stack, embedded].flatMap((measured) => (measured ? [{ stack: measured, targets: gatewayTargets(measured) }] : []));
    const peers = await startPeers(workers, upstream.url, workDir, results.missingPeers);

    const throughput = await measureThroughput(
      [
        ...(index === 0 ? [upstreamTarget] : []),
        baselineTarget,
        ...gateways.flatMap(({ targets }) => [targets.public, targets.protected, targets.policy, targets.rules, ...(targets.pool ? [targets.pool] : [])]),
        ...peers.map((peer): Target => ({ name: peer.name, workers, url: peer.url, headers: peer.headers })),
      ],
      settings,
      ledger,
    );
    throughput.forEach(logMeasurement);
    results.throughput.push(...throughput);
    for (const peer of peers) await peer.stop();

    for (const { stack: measured, targets } of gateways) {
      const protectedMax = throughput.find((m) => m.name === targets.protected.name)!;
      const rate = Math.max(1, Math.round(protectedMax.requestsPerSecond / 2));
      const fixedRate = await measureFixedRate([baselineTarget, targets.protected], rate, settings, ledger);
      fixedRate.forEach(logMeasurement);
      results.fixedRate.push(...fixedRate);

      const memory = await measureMemory(targets.protected, measured.proxyPid, settings, ledger, measured.metricsRssBytes);
      logMemory(memory);
      results.memory.push(memory);
    }
    const baselineMemory = await measureMemory(baselineTarget, baseline.child.pid, settings, ledger);
    logMemory(baselineMemory);
    results.memory.push(baselineMemory);

    await baseline.child.stop();
    for (const { stack: measured } of gateways) results.accessLog.push(...(await finishStack(measured, ledger)));
    if (stack && workers === settings.workerCounts[0]) {
      results.routing.push(...(await measureRouting(stack, upstream, settings, ledger, workDir, results.accessLog)));
    }
  }
  // With every other server but the upstream stopped, so that the CPU of a role (`gateway proxy`,
  // `caddy`) is that of the stack or peer under load alone.
  log('\nTLS, HTTP/2 and gRPC (1 worker)');
  await measureTls(mode.used, upstream, settings, ledger, workDir, results);
  await measureGrpc(mode.used, upstream, settings, ledger, workDir, results);
  // Last: it fills a gigabyte of day files, and its gateways start fresh. A failure of it is a
  // failed target, not the loss of the run's other results.
  let scaleError: string | undefined;
  if (scaleSettings.enabled) {
    results.accessLogScale = await measureAccessLogScale(scaleSettings, upstream.url, workDir).catch((error: unknown) => {
      scaleError = error instanceof Error ? (error.stack ?? error.message) : String(error);
      log(`  access-log scale scenario failed: ${scaleError}`);
      return null;
    });
  } else {
    log('\n(access-log scale scenario left out: BENCH_ACCESS_LOG_SCALE=0)');
  }
  await upstream.child.stop();

  results.finishedAt = new Date().toISOString();
  results.targets = evaluateTargets(results);
  if (scaleError !== undefined) results.targets.push({ target: 'access-log scale scenario ran', workers: null, pass: false, detail: scaleError.split('\n')[0]! });
  printSummary(results);
  writeResults(results);
  rmSync(workDir, { recursive: true, force: true });
}

/**
 * Starts the reference peers (Caddy, Apache httpd + mod_auth_openidc) at `workers`; one that
 * cannot start is noted in `missing` (once) and left out.
 */
async function startPeers(workers: number, upstreamUrl: string, workDir: string, missing: MissingPeer[]): Promise<Peer[]> {
  const started: Peer[] = [];
  for (const start of [startCaddy, startApacheOpenidc]) {
    const peer = await start(workers, upstreamUrl, workDir);
    if ('reason' in peer) {
      log(`  (no ${peer.name} at ${workers} worker${workers === 1 ? '' : 's'}: ${peer.reason})`);
      if (!missing.some((m) => m.name === peer.name)) missing.push(peer);
    } else {
      started.push(peer);
    }
  }
  return started;
}

/** Starts a gateway stack; its readiness probes go into the ledger like any other request. */
async function startStack(options: StackOptions, ledger: ClientLedger): Promise<GatewayStack> {
  const stack = await startGatewayStack(options);
  ledger.add(stack.name, stack.routes.publicService.id, { responses: stack.probeResponses, inFlightAtStop: 0 });
  return stack;
}

/**
 * The protected targets carry the session cookie; each is accounted to its stack's service.
 * An embedded stack's rows are named `embedded gateway …`.
 */
function gatewayTargets(stack: GatewayStack): { public: Target; protected: Target; policy: Target; rules: Target; pool: Target | undefined } {
  const rowName = stack.mode === 'embedded' ? ROWS.embedded : (row: string) => row;
  /** Row `row` on `prefix`'s service, with the session cookie when `signedIn`. */
  const target = (row: string, prefix: string, service: Service, signedIn: boolean): Target => ({
    name: rowName(row),
    workers: stack.workers,
    url: `${stack.origin}${prefix}${REQUEST_PATH}`,
    ...(signedIn ? { headers: { cookie: stack.cookie } } : {}),
    account: { stack: stack.name, serviceId: service.id },
  });
  const { routes } = stack;
  return {
    pool: routes.poolService && target(ROWS.pool, '/pool', routes.poolService, false),
    public: target(ROWS.public, '/public', routes.publicService, false),
    protected: target(ROWS.protected, '/protected', routes.protectedService, true),
    policy: target(ROWS.policy, '/protected-policy', routes.policyService, true),
    rules: target(ROWS.rules, '/protected-rules', routes.rulesService, true),
  };
}

/**
 * The public route with few services registered against the same route with
 * `settings.manyServices` registered: two fresh stacks like `like`, started together (so neither
 * has a bigger database than the other), measured in interleaved rounds, twice as many and twice
 * as long as elsewhere: the target is a 5 % band, as narrow as the run-to-run noise of one round.
 */
async function measureRouting(
  like: GatewayStack,
  upstream: ReferenceServer,
  settings: BenchSettings,
  ledger: ClientLedger,
  workDir: string,
  accessLog: AccessLogCheck[],
): Promise<BenchResults['routing']> {
  const start = (services: number) =>
    startStack({ name: `gateway-${like.mode}-${like.workers}w-${services}-services`, mode: like.mode, workers: like.workers, services, upstreamUrl: upstream.url, workDir }, ledger);
  const few = await start(settings.fewServices);
  const many = await start(settings.manyServices);
  const [fewResult, manyResult] = await measureThroughput(
    [
      { ...gatewayTargets(few).public, name: ROWS.routing(settings.fewServices) },
      { ...gatewayTargets(many).public, name: ROWS.routing(settings.manyServices) },
    ],
    { ...settings, rounds: settings.rounds * 2, durationS: settings.durationS * 2 },
    ledger,
  );
  logMeasurement(fewResult!);
  logMeasurement(manyResult!);
  accessLog.push(...(await finishStack(few, ledger)), ...(await finishStack(many, ledger)));
  return [
    { services: settings.fewServices, measurement: fewResult! },
    { services: settings.manyServices, measurement: manyResult! },
  ];
}

/**
 * The TLS and h2 rows, at 1 worker, after the worker counts' runs: the protected route over
 * HTTPS, a fresh gateway stack of the run's mode with TLS_CERT_FILE/TLS_KEY_FILE against Caddy
 * with `tls` and the same self-signed certificate, both before the same upstream, each loaded
 * over HTTP/1.1 with keep-alive
 * (autocannon's connections each make one handshake, then send every request on it) and over
 * HTTP/2 by ALPN (the same number of streams over {@link H2_SESSIONS} connections,
 * http2-load.ts), the four measured together in interleaved rounds like the throughput rows. Left
 * out, with the reason printed and reported, when openssl or Caddy is missing.
 */
async function measureTls(
  mode: StackMode,
  upstream: ReferenceServer,
  settings: BenchSettings,
  ledger: ClientLedger,
  workDir: string,
  results: BenchResults,
): Promise<void> {
  const rowName = mode === 'embedded' ? ROWS.embedded : (row: string) => row;
  const skip = (reason: string) => {
    log(`  (no TLS and h2 rows: ${reason})`);
    for (const name of [rowName(ROWS.protectedHttps), rowName(ROWS.protectedH2), ROWS.caddyHttps, ROWS.caddyH2]) results.missingPeers.push({ name, reason });
  };
  const certificate = makeBenchCertificate(workDir);
  if ('reason' in certificate) return skip(certificate.reason);
  const caddy = await startCaddy(1, upstream.url, workDir, certificate);
  if ('reason' in caddy) return skip(`caddy: ${caddy.reason}`);
  const stack = await startStack({ name: `gateway-${mode}-1w-https`, mode, workers: 1, services: settings.fewServices, upstreamUrl: upstream.url, workDir, tls: certificate }, ledger);
  const gateway = gatewayTargets(stack).protected;
  const caddyTarget: Target = { name: caddy.name, workers: 1, url: caddy.url };
  const h2 = { kind: 'h2', caFile: certificate.certFile, sessions: H2_SESSIONS } as const;
  const rows = [
    { ...gateway, name: rowName(ROWS.protectedHttps) },
    { ...gateway, name: rowName(ROWS.protectedH2), client: h2 },
    caddyTarget,
    { ...caddyTarget, name: ROWS.caddyH2, client: h2 },
  ];
  await measureRows(rows, stack, () => caddy.stop(), settings, ledger, results);
}

/**
 * The gRPC rows, at 1 worker: unary calls (grpc-load.ts, `BENCH_CONNECTIONS` concurrent calls on
 * one grpc-js channel) to the grpc-js target directly and through a fresh gateway stack of the
 * run's mode with `H2C=true`, its public service `/grpc` reaching the same target over h2c,
 * measured together in interleaved rounds; the CPU tables give each side's cost per call.
 */
async function measureGrpc(
  mode: StackMode,
  upstream: ReferenceServer,
  settings: BenchSettings,
  ledger: ClientLedger,
  workDir: string,
  results: BenchResults,
): Promise<void> {
  const target = await startGrpcTargetProcess(workDir);
  const stack = await startStack(
    { name: `gateway-${mode}-1w-grpc`, mode, workers: 1, services: settings.fewServices, upstreamUrl: upstream.url, grpcTargetUrl: target.url, workDir, env: { H2C: 'true' } },
    ledger,
  );
  const grpcService = stack.routes.grpcService!;
  const rows: Target[] = [
    { name: ROWS.grpcDirect, workers: 1, url: target.url, client: { kind: 'grpc' } },
    {
      name: mode === 'embedded' ? ROWS.embedded(ROWS.grpcGateway) : ROWS.grpcGateway,
      workers: 1,
      url: `${stack.origin.replace(/^http:/, 'h2c:')}${grpcService.path}`,
      client: { kind: 'grpc' },
      account: { stack: stack.name, serviceId: grpcService.id },
    },
  ];
  await measureRows(rows, stack, () => target.child.stop(), settings, ledger, results);
}

/**
 * Measures `rows` together (interleaved rounds), logs and keeps the figures, then stops the peer
 * (`stopPeer`) and the gateway `stack`, checking its access log.
 */
async function measureRows(rows: Target[], stack: GatewayStack, stopPeer: () => Promise<unknown>, settings: BenchSettings, ledger: ClientLedger, results: BenchResults): Promise<void> {
  const measured = await measureThroughput(rows, settings, ledger);
  measured.forEach(logMeasurement);
  results.throughput.push(...measured);
  await stopPeer();
  results.accessLog.push(...(await finishStack(stack, ledger)));
}

/** Reads the gateway's served counts, stops it, and checks its stored access logs. */
async function finishStack(stack: GatewayStack, ledger: ClientLedger): Promise<AccessLogCheck[]> {
  await new Promise((resolve) => setTimeout(resolve, 1_000)); // records of cut-off requests are written on close
  const served = await stack.servedByService().catch((error: unknown) => ({ error: `${stack.name} /metrics: ${error instanceof Error ? error.message : String(error)}` }));
  const stored = await stack.stop();
  const { publicService, protectedService, policyService, poolService, grpcService } = stack.routes;
  const checks = [publicService, protectedService, policyService, ...(poolService ? [poolService] : []), ...(grpcService ? [grpcService] : [])]
    .map((service) => checkAccessLog(stack.name, service, ledger.get(stack.name, service.id), served instanceof Map ? (served.get(service.id) ?? 0) : served, stored.get(service.id) ?? 0))
    .filter((check) => check.responses > 0);
  for (const check of checks) {
    const served = check.served ?? `n/a (${check.servedError})`;
    log(`  access log ${check.stack} ${check.service}: stored ${check.stored}, served ${served}, responses ${check.responses} (+ ≤ ${check.inFlightAtStop} in flight at stops): ${check.pass ? 'PASS' : 'FAIL'}`);
  }
  return checks;
}

async function chooseMode(settings: BenchSettings, workDir: string): Promise<{ used: StackMode; note: string }> {
  if (settings.mode === 'embedded') return { used: 'embedded', note: 'BENCH_MODE=embedded' };
  const split = await splitModeAvailability(workDir);
  if (split.available) return { used: 'split', note: 'start:admin + start:proxy + redis-server' };
  if (settings.mode === 'split') throw new Error(`BENCH_MODE=split, but split mode is not available: ${split.reason}`);
  return { used: 'embedded', note: `split mode not available: ${split.reason}` };
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
