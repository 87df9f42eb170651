/**
 * What tracing (README "Tracing", design.md §3.10) costs the data plane:
 * `node dist/bench/tracing/tracing-cost.js`. Three gateway stacks (gateway-stack.ts: split mode when
 * Redis is available, one proxy process, else embedded) behind the bench upstream, alike but for
 * tracing: off (OTEL_TRACES_EXPORTER unset), on at the default sampler and ratio
 * (`parentbased_traceidratio`, 1 %), and on with every request sampled (`always_on`), exporting to
 * a counting OTLP receiver in this process (span-counter.ts). Interleaved rounds (the order
 * reversed every other round) of the same fixed rate on `/protected/bench` with the bench's
 * session; per stack: the proxy process's CPU per request (user + system ticks of /proc over the
 * responses), spans received per request and per second, and its RSS after the rounds. Then one
 * closed-loop run per stack: the most requests per second, and the spans per second the exporter
 * delivered at 100 %.
 * Settings: TRACING_BENCH_ROUNDS (5), TRACING_BENCH_SECONDS (15 per round), TRACING_BENCH_RATE
 * (1000 requests/s).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { splitModeAvailability, startGatewayStack, type GatewayStack } from '../gateway-stack.js';
import { runLoad } from '../load.js';
import { nameProcess, readCpu, treeMemory } from '../process-stats.js';
import { startBenchUpstream } from '../reference-servers.js';
import { startSpanCounter, type SpanCounter } from './span-counter.js';

const ROUNDS = Number(process.env.TRACING_BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.TRACING_BENCH_SECONDS ?? 15);
const RATE = Number(process.env.TRACING_BENCH_RATE ?? 1000);
/** /proc's clock tick, in µs (USER_HZ 100). */
const TICK_US = 10_000;
/** Longer than the span export's batching delay (2 s): what a round's requests made has arrived after it. */
const EXPORT_SETTLE_MS = 3_000;

interface Variant {
  name: string;
  /** OTEL_SERVICE_NAME, by which the counter tells its spans apart. */
  serviceName: string;
  env: Record<string, string>;
}

const VARIANTS: Variant[] = [
  { name: 'off', serviceName: 'bench-off', env: {} },
  { name: '1 %', serviceName: 'bench-1pct', env: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } },
  { name: '100 %', serviceName: 'bench-100pct', env: { OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'always_on' } },
];

/** What one stack measured over the rounds. */
interface Measured {
  cpuUsPerRequest: number[];
  requests: number;
  spans: number;
  rssBytes: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const role = (variant: Variant) => `proxy tracing ${variant.name}`;
const ticksOf = (variant: Variant) => readCpu().ownTicksByRole.get(role(variant)) ?? 0;

/** One load run on `stack`'s protected route: its responses and the proxy's CPU ticks meanwhile. */
async function loadOnce(stack: GatewayStack, variant: Variant, durationS: number, rate: number | undefined, connections: number): Promise<{ responses: number; ticks: number }> {
  const before = ticksOf(variant);
  const load = await runLoad({ url: `${stack.origin}/protected/bench`, connections, durationS, ...(rate ? { rate } : {}), headers: { cookie: stack.cookie } });
  if (load.responsesNon2xx > 0 || load.errors > 0) throw new Error(`${variant.name}: ${load.responsesNon2xx} non-2xx answers, ${load.errors} errors`);
  return { responses: load.responses2xx, ticks: ticksOf(variant) - before };
}

async function interleavedRounds(stacks: Map<Variant, GatewayStack>, counter: SpanCounter): Promise<Map<Variant, Measured>> {
  const measured = new Map(VARIANTS.map((variant) => [variant, { cpuUsPerRequest: [] as number[], requests: 0, spans: 0, rssBytes: 0 }]));
  for (const [variant, stack] of stacks) await loadOnce(stack, variant, 3, RATE, 16); // warm-up: JIT, connections, session cache
  await sleep(EXPORT_SETTLE_MS);
  const spansBefore = new Map(VARIANTS.map((variant) => [variant, counter.spans(variant.serviceName)]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse();
    for (const variant of order) {
      const { responses, ticks } = await loadOnce(stacks.get(variant)!, variant, SECONDS, RATE, 16);
      const m = measured.get(variant)!;
      m.cpuUsPerRequest.push((ticks * TICK_US) / responses);
      m.requests += responses;
      console.log(`  round ${round + 1} ${variant.name.padEnd(5)} ${((ticks * TICK_US) / responses).toFixed(1)} µs CPU per request (${responses} requests)`);
    }
  }
  await sleep(EXPORT_SETTLE_MS);
  for (const [variant, stack] of stacks) {
    const m = measured.get(variant)!;
    m.spans = counter.spans(variant.serviceName) - spansBefore.get(variant)!;
    m.rssBytes = treeMemory(stack.proxyPid).rssBytes;
  }
  return measured;
}

function report(measured: Map<Variant, Measured>): void {
  const off = median(measured.get(VARIANTS[0]!)!.cpuUsPerRequest);
  console.log(`\nproxy CPU per protected request at ${RATE} requests/s, median of ${ROUNDS} rounds of ${SECONDS} s (interleaved)`);
  for (const [variant, m] of measured) {
    const cpu = median(m.cpuUsPerRequest);
    const spansPerRequest = m.spans / m.requests;
    console.log(
      `  ${variant.name.padEnd(5)} ${cpu.toFixed(1).padStart(6)} µs (${cpu - off >= 0 ? '+' : ''}${(cpu - off).toFixed(1)} µs vs off; rounds ${m.cpuUsPerRequest.map((us) => us.toFixed(1)).join(', ')})` +
        `  ${spansPerRequest.toFixed(3)} spans/request, ${Math.round(spansPerRequest * RATE)} spans/s  RSS ${(m.rssBytes / 2 ** 20).toFixed(0)} MiB`,
    );
  }
}

/** The closed-loop ceiling of each stack, and what the exporter delivered meanwhile at 100 %. */
async function closedLoop(stacks: Map<Variant, GatewayStack>, counter: SpanCounter): Promise<void> {
  console.log(`\nclosed loop, 64 connections, ${SECONDS} s each`);
  for (const [variant, stack] of stacks) {
    const spansBefore = counter.spans(variant.serviceName);
    const { responses, ticks } = await loadOnce(stack, variant, SECONDS, undefined, 64);
    await sleep(EXPORT_SETTLE_MS);
    const spans = counter.spans(variant.serviceName) - spansBefore;
    const rss = treeMemory(stack.proxyPid).rssBytes;
    console.log(
      `  ${variant.name.padEnd(5)} ${Math.round(responses / SECONDS)} requests/s, ${((ticks * TICK_US) / responses).toFixed(1)} µs CPU per request,` +
        ` ${Math.round(spans / SECONDS)} spans/s received (${(spans / responses).toFixed(3)} per request), RSS ${(rss / 2 ** 20).toFixed(0)} MiB`,
    );
  }
}

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-tracing-bench-'));
  const counter = await startSpanCounter();
  const upstream = await startBenchUpstream(workDir);
  const mode = (await splitModeAvailability(workDir)).available ? 'split' : 'embedded';
  const stacks = new Map<Variant, GatewayStack>();
  try {
    for (const variant of VARIANTS) {
      const env = { ...variant.env, OTEL_SERVICE_NAME: variant.serviceName, OTEL_EXPORTER_OTLP_ENDPOINT: counter.endpoint };
      const stack = await startGatewayStack({ name: `tracing-${variant.serviceName}`, mode, workers: 1, services: 10, upstreamUrl: upstream.url, workDir, env });
      nameProcess(stack.proxyPid, role(variant));
      stacks.set(variant, stack);
    }
    console.log(`tracing cost, ${mode} mode, one proxy process per stack; logs in ${workDir}`);
    report(await interleavedRounds(stacks, counter));
    await closedLoop(stacks, counter);
  } finally {
    for (const stack of stacks.values()) await stack.stop();
    await upstream.child.stop();
    await counter.close();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
