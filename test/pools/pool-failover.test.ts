/**
 * A service's pool of targets in the embedded gateway (issue 23, "Done when"), made through the
 * admin API (`POST /api/services` with `targets`) and proxied to real target processes
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts:
 * - three targets under load, one SIGKILLed: no GET fails, only POSTs in flight to it do; it is
 *   ejected (`/metrics`, `GET /api/services/:id/health`) and gets nothing more; started again and
 *   passing its active check, it is back and gets traffic;
 * - every target killed: 503 `Service unavailable` to each request, at once.
 */
import { after, before, describe, it } from 'node:test';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { apiPoolView, createPoolService } from '../support/pool-gateways.js';
import { ALL_DOWN_POOL_SETTINGS, allTargetsDown, FAILOVER_POOL_SETTINGS, killOneUnderLoad } from '../support/pool-scenarios.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { startTargetProcesses, type TargetProcess } from '../support/target-process.js';

let gw: TestGateway;
let admin: SignedIn;
const targets: TargetProcess[] = [];
const closers: Array<() => Promise<void>> = [];

before(async () => {
  gw = await startTestGateway();
  admin = await signIn(gw);
});
after(async () => {
  for (const close of closers) await close();
  await Promise.all(targets.map((target) => target.close()));
  await gw?.close();
});

/** A pool service at `path` over new targets `ids`, and the gateway as the scenarios see it. */
async function poolOf(path: string, ids: string[], delayMs: number, fields: Record<string, unknown>) {
  const pool = await startTargetProcesses(ids, { delayMs });
  targets.push(...pool);
  const service = await createPoolService(gw.origin, admin, [gw.origin], path, pool, { loadBalancing: 'round_robin', ...fields });
  const view = apiPoolView({ publicUrls: [gw.origin], metricsUrls: [`${gw.adminUrl}/metrics`], apiUrl: gw.origin, admin, service, pool });
  closers.push(view.close);
  return { pool, view };
}

describe('embedded: a pool of three targets, one killed (SIGKILL) under load', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it, and takes it back once its active check passes', async (t) => {
    const { pool, view } = await poolOf('/failover', ['a', 'b', 'c'], 15, FAILOVER_POOL_SETTINGS);
    await killOneUnderLoad(t, view, pool);
  });
});

describe('embedded: a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once (GET and POST, one at a time and concurrently)', async () => {
    const { pool, view } = await poolOf('/alldown', ['x', 'y', 'z'], 0, ALL_DOWN_POOL_SETTINGS);
    await allTargetsDown(view, pool);
  });
});
