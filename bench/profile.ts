/**
 * `node dist/bench/profile.js`: CPU profiles of the gateway's data plane and admin process on the protected route
 * (logged-in session, general rate limiter on, access logging on), the benchmark's hardest
 * scenario. Starts the bench upstream and a gateway stack (split mode when available, else
 * embedded; BENCH_MODE, BENCH_PROFILE_WORKERS (1) and BENCH_PROFILE_SERVICES (10) choose) with
 * `node --cpu-prof`, loads it with
 * autocannon for BENCH_DURATION s (10) after a BENCH_WARMUP s (3) warm-up, stops it (profiles are
 * written on exit), and prints where each data-plane process spent its time. The `.cpuprofile`
 * files stay in the printed folder (open them in Chrome DevTools); the summary goes to
 * `bench/results/profile.json`. BENCH_PROFILE_TARGET=baseline profiles the baseline proxy instead,
 * for a side-by-side look at what both pay.
 */
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { summariseCpuProfile, type ProfileRow } from './cpu-profile-summary.js';
import { splitModeAvailability, startGatewayStack } from './gateway-stack.js';
import { runLoad } from './load.js';
import { startBaselineProxy, startBenchUpstream } from './reference-servers.js';
import { log } from './report.js';
import { readSettings } from './settings.js';

const SUMMARY_PATH = fileURLToPath(new URL('../../bench/results/profile.json', import.meta.url));

async function main(): Promise<void> {
  const settings = readSettings();
  const workers = Number(process.env.BENCH_PROFILE_WORKERS ?? '1');
  const services = Number(process.env.BENCH_PROFILE_SERVICES ?? settings.fewServices);
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-profile-'));
  const profileDir = join(workDir, 'profiles');
  const split = settings.mode === 'embedded' ? { available: false, reason: 'BENCH_MODE=embedded' } : await splitModeAvailability(workDir);
  const mode = split.available ? 'split' : 'embedded';
  log(`Profiling ${process.env.BENCH_PROFILE_TARGET === 'baseline' ? 'the baseline proxy' : 'the gateway'} (${mode} mode${split.available ? '' : `: ${split.reason}`}, ${workers} worker(s), ${services} services); files in ${workDir}`);

  const upstream = await startBenchUpstream(workDir);
  const nodeArgs = ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  const target = process.env.BENCH_PROFILE_TARGET === 'baseline'
    ? await profiledBaseline(workers, upstream.url, workDir, nodeArgs)
    : await profiledGateway({ name: `profile-${mode}-${workers}w`, mode, workers: mode === 'split' ? workers : 1, services, upstreamUrl: upstream.url, workDir, nodeArgs, adminNodeArgs: nodeArgs });
  const { url, headers } = target;
  await runLoad({ url, connections: settings.connections, durationS: settings.warmupS, headers });
  const result = await runLoad({ url, connections: settings.connections, durationS: settings.durationS, headers, workers: settings.loadWorkers });
  log(`Load: ${result.requestsPerSecond} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, non-2xx ${result.responsesNon2xx}`);
  await target.stop();
  await upstream.child.stop();

  // The data plane's processes and the admin's: those that worked (a cluster primary barely does).
  const files = readdirSync(profileDir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => join(profileDir, name))
    .sort((a, b) => statSync(b).size - statSync(a).size);
  const summaries = files.map((file) => ({ file, ...summariseCpuProfile(file) })).filter((s) => s.busyPercent > 5);
  for (const summary of summaries) {
    log(`\n${summary.file}: ${summary.durationMs} ms, busy ${summary.busyPercent}%`);
    print('Self time by place', summary.selfByPlace.slice(0, 15));
    print('Self time by function', summary.selfByFunction.slice(0, 25));
    print('Total time of our functions (self + callees)', summary.totalByOwnFunction.slice(0, 20));
    print('Time charged to the innermost of our functions on the stack', summary.selfByInnermostOwnFunction.slice(0, 20));
  }
  writeFileSync(SUMMARY_PATH, `${JSON.stringify({ mode, workers, load: result, profiles: summaries }, null, 2)}\n`);
  log(`\nSummary written to ${SUMMARY_PATH}`);
}

interface ProfiledTarget {
  url: string;
  headers: Record<string, string>;
  stop(): Promise<unknown>;
}

/** The gateway's protected route with a signed-in session. */
async function profiledGateway(options: Parameters<typeof startGatewayStack>[0]): Promise<ProfiledTarget> {
  const stack = await startGatewayStack(options);
  return { url: `${stack.origin}/protected/bench`, headers: { cookie: stack.cookie }, stop: () => stack.stop() };
}

async function profiledBaseline(workers: number, upstreamUrl: string, workDir: string, nodeArgs: string[]): Promise<ProfiledTarget> {
  const baseline = await startBaselineProxy(workers, upstreamUrl, workDir, nodeArgs);
  return { url: `${baseline.url}/protected/bench`, headers: {}, stop: () => baseline.child.stop() };
}

function print(title: string, rows: ProfileRow[]): void {
  log(`  ${title}`);
  for (const row of rows) log(`    ${row.percent.toFixed(1).padStart(5)}%  ${String(row.ms).padStart(6)} ms  ${row.name}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`profile failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
