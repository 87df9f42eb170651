/**
 * What a service's rules (design.md §4.18) cost a protected request: `node dist/bench/rule-cost.js`.
 * Two measurements in one run, each a ratio taken within it:
 * - in the process, no load: the data plane's rule step (proxy/pipeline/rule-decision.ts: the
 *   compiled rules' `decide`, then the guard) for a service without rules (`route.rules` is
 *   undefined: one check), with 16 rules none matching (every rule compared, seed.ts
 *   `BENCH_RULES`), and with the request hitting the 16th; A/B rounds, ns per request;
 * - end to end: the protected route with no rules (`/protected/bench`) against the same with 16
 *   rules none matching (`/protected-rules/bench`), on one gateway stack (split mode when Redis is
 *   available, else embedded), the bench's session cookie, interleaved autocannon rounds
 *   (scenarios.ts `measureThroughput`): requests/s and the proxy's CPU per request.
 * `npm run bench` has the same end-to-end pair as rows `gateway protected` and `gateway protected,
 * 16 rules` (target: within 3 %); this runs them alone in about a minute.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClientLedger } from './access-log/access-log-check.js';
import { splitModeAvailability, startGatewayStack } from './gateway-stack.js';
import { startBenchUpstream } from './reference-servers.js';
import { measureThroughput, type Target } from './scenarios.js';
import { BENCH_RULES } from './seed.js';
import { readSettings } from './settings.js';
import { compileServiceRules, guardOfDecision, type CompiledRules } from '../shared/services/service-rules.js';
import { routingKey } from '../shared/routing/routing-key.js';
import { service } from '../test/support/samples.js';

const CALLS = 2_000_000;
const ROUNDS = 7;
const PREFIX_KEY = '/protected-rules';

/** The rule step as rule-decision.ts takes it for a GET that is no preflight: undefined rules pay one check. */
function ruleStep(rules: CompiledRules | undefined, key: string): unknown {
  return rules && guardOfDecision(rules, rules.decide('GET', key, PREFIX_KEY.length, false));
}

function inProcess(): void {
  const make = (rules: typeof BENCH_RULES) => compileServiceRules(service({ path: PREFIX_KEY, targetUrl: 'http://127.0.0.1:1', requireAuth: true, rules }));
  const lastHit = [...BENCH_RULES.slice(0, 15), { paths: ['/bench'], action: 'public' as const }];
  const variants: Record<string, [CompiledRules | undefined, string]> = {
    'no rules': [make([]), routingKey('/protected-rules/bench')],
    '16 rules, none matching': [make(BENCH_RULES), routingKey('/protected-rules/bench')],
    '16 rules, the last matching': [make(lastHit), routingKey('/protected-rules/bench')],
  };
  const timings = Object.fromEntries(Object.keys(variants).map((name) => [name, [] as number[]]));
  let sink = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.entries(variants);
    if (round % 2 === 1) order.reverse();
    for (const [name, [rules, key]] of order) {
      const started = performance.now();
      for (let n = 0; n < CALLS; n++) if (ruleStep(rules, key) !== undefined) sink++;
      if (round > 0) timings[name]!.push(((performance.now() - started) * 1e6) / CALLS); // round 0 warms up
    }
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const base = median(timings['no rules']!);
  console.log(`the rule step per request, median of ${ROUNDS - 1} rounds of ${CALLS.toLocaleString('en')} calls (${sink > 0 ? 'a rule matched' : 'none matched'} somewhere)`);
  for (const [name, values] of Object.entries(timings)) {
    const ns = median(values);
    console.log(`  ${name.padEnd(28)} ${ns.toFixed(1).padStart(7)} ns  (+${(ns - base).toFixed(1)} ns over no rules)`);
  }
}

async function endToEnd(): Promise<void> {
  const settings = { ...readSettings(), durationS: Number(process.env.BENCH_DURATION ?? 24), rounds: Number(process.env.BENCH_ROUNDS ?? 6) };
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-rule-cost-'));
  const upstream = await startBenchUpstream(workDir);
  const mode = (await splitModeAvailability(workDir)).available ? 'split' : 'embedded';
  const stack = await startGatewayStack({ name: `rules-${mode}`, mode, workers: 1, services: settings.fewServices, upstreamUrl: upstream.url, workDir });
  try {
    const target = (name: string, path: string, serviceId: string): Target => ({
      name,
      workers: 1,
      url: `${stack.origin}${path}/bench`,
      headers: { cookie: stack.cookie },
      account: { stack: stack.name, serviceId },
    });
    const [none, sixteen] = await measureThroughput(
      [target('protected, no rules', '/protected', stack.routes.protectedService.id), target('protected, 16 rules', '/protected-rules', stack.routes.rulesService.id)],
      settings,
      new ClientLedger(),
    );
    console.log(`end to end, ${mode} mode, 1 proxy worker, ${settings.rounds} interleaved rounds of ${settings.durationS / settings.rounds} s, ${settings.connections} connections`);
    for (const m of [none!, sixteen!]) {
      const proxy = m.cpuMicrosPerRequest['gateway proxy'] ?? m.cpuMicrosPerRequest['embedded gateway'] ?? NaN;
      console.log(`  ${m.name.padEnd(20)} ${Math.round(m.requestsPerSecond).toLocaleString('en').padStart(7)} req/s  p99 ${m.p99Ms} ms  proxy CPU ${proxy.toFixed(1)} µs/request  non-2xx ${m.non2xx}  (${JSON.stringify(m.cpuMicrosPerRequest)})`);
    }
    console.log(`  ratio 16 rules / no rules: ${(sixteen!.requestsPerSecond / none!.requestsPerSecond).toFixed(3)}× req/s`);
  } finally {
    await stack.stop();
    await upstream.child.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

inProcess();
await endToEnd();
