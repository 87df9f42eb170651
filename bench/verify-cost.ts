/**
 * What the verify endpoint (design.md §4.19) costs: `node dist/bench/verify-cost.js`. One embedded
 * gateway (gateway-stack.ts, TRUST_PROXY=127.0.0.1) with the bench's session, the bench upstream,
 * and Debian's nginx in front (test/support/ingress-servers.ts, the README's `auth_request`
 * configuration). Two rows taken in turns (interleaved rounds, order reversed every other round)
 * at the same closed loop, the protected route `/protected/bench` with the session cookie:
 * - `nginx + verify`: nginx asks `/auth/verify` for every request, then proxies to the upstream
 *   itself: the gateway's CPU per request is its CPU per decision;
 * - `gateway proxies`: the same gateway decides and forwards the request itself.
 * Prints requests/s and CPU µs per request of each process (/proc ticks), and the ratios of one
 * run. `VERIFY_BENCH_ROUNDS` (4), `VERIFY_BENCH_SECONDS` (8), `VERIFY_BENCH_CONNECTIONS` (32).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/free-port.js';
import { startNginx } from '../test/support/ingress-servers.js';
import { startGatewayStack } from './gateway-stack.js';
import { runLoad } from './load.js';
import { cpuBetween, nameProcess, processTree, readCpu } from './process-stats.js';
import { startBenchUpstream } from './reference-servers.js';

const ROUNDS = Number(process.env.VERIFY_BENCH_ROUNDS ?? 4);
const SECONDS = Number(process.env.VERIFY_BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.VERIFY_BENCH_CONNECTIONS ?? 32);

/** One row's totals over its rounds. */
interface Totals {
  requests: number;
  seconds: number;
  non2xx: number;
  /** CPU seconds by role. */
  cpu: Record<string, number>;
}

async function main(): Promise<void> {
  const workDir = mkdtempSync(join(tmpdir(), 'gatehouse-verify-bench-'));
  const upstream = await startBenchUpstream(workDir);
  const stack = await startGatewayStack({ name: 'gateway-verify', mode: 'embedded', workers: 1, services: 10, upstreamUrl: upstream.url, workDir, env: { TRUST_PROXY: '127.0.0.1' } });
  const nginx = await startNginx({ port: await freePort(), gateway: new URL(stack.origin).host, upstream: new URL(upstream.url).host });
  for (const pid of processTree(nginx.pid)) nameProcess(pid, 'nginx');
  const rows = {
    'nginx + verify': `${nginx.origin}/protected/bench`,
    'gateway proxies': `${stack.origin}/protected/bench`,
  };
  const totals = Object.fromEntries(Object.keys(rows).map((name) => [name, { requests: 0, seconds: 0, non2xx: 0, cpu: {} } as Totals]));
  try {
    for (let round = 0; round <= ROUNDS; round++) {
      const order = Object.entries(rows);
      if (round % 2 === 1) order.reverse();
      for (const [name, url] of order) {
        const before = readCpu();
        const load = await runLoad({ url, connections: CONNECTIONS, durationS: round === 0 ? 2 : SECONDS, headers: { cookie: stack.cookie } });
        const used = cpuBetween(before, readCpu());
        if (round === 0) continue; // warm-up
        const row = totals[name]!;
        row.requests += load.requestsPerSecond * load.durationS;
        row.seconds += load.durationS;
        row.non2xx += load.responsesNon2xx;
        for (const [role, cores] of Object.entries(used.byRole)) row.cpu[role] = (row.cpu[role] ?? 0) + cores * used.seconds;
      }
    }
    report(totals);
  } finally {
    await nginx.stop();
    await stack.stop();
    await upstream.child.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Prints each row and the ratios. */
function report(totals: Record<string, Totals>): void {
  const perRequest = (row: Totals, role: string) => ((row.cpu[role] ?? 0) * 1e6) / row.requests;
  console.log(`verify endpoint cost, ${ROUNDS} interleaved rounds of ${SECONDS} s, ${CONNECTIONS} connections, /protected/bench with a session`);
  for (const [name, row] of Object.entries(totals)) {
    const roles = Object.keys(row.cpu).sort().map((role) => `${role} ${perRequest(row, role).toFixed(1)}`).join(', ');
    console.log(`  ${name}: ${Math.round(row.requests / row.seconds)} req/s (${row.non2xx} non-2xx); CPU µs per request: ${roles}`);
  }
  const [verify, direct] = [totals['nginx + verify']!, totals['gateway proxies']!];
  const gatewayRole = 'embedded gateway';
  console.log(`  gateway CPU per decision ÷ per proxied request: ${(perRequest(verify, gatewayRole) / perRequest(direct, gatewayRole)).toFixed(2)}`);
  console.log(`  req/s nginx + verify ÷ gateway proxies: ${(verify.requests / verify.seconds / (direct.requests / direct.seconds)).toFixed(2)}`);
}

await main();
