/**
 * A service's pool of targets in split mode (issue 23, "Done when"): made through the admin
 * process's API, proxied by two `start:proxy` processes over a real Redis to real target processes
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts with the load
 * spread over both proxies, each judging the targets on its own:
 * - three targets under load, one SIGKILLed: no GET fails, only POSTs in flight to it do; each
 *   proxy ejects it (its own `/metrics`; the admin's `GET /api/services/:id/health` shows both
 *   proxies' views, reported over Redis) and sends it nothing more; started again and passing its
 *   active check, it is back on both and gets traffic;
 * - every target killed: 503 `Service unavailable` to each request, at once, from both proxies.
 */
import { after, before, describe, it } from 'node:test';
import { apiPoolView, createPoolService } from '../support/pool-gateways.js';
import { ALL_DOWN_POOL_SETTINGS, allTargetsDown, FAILOVER_POOL_SETTINGS, killOneUnderLoad } from '../support/pool-scenarios.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startTargetProcesses, type TargetProcess } from '../support/target-process.js';

let split: SplitGateway;
let admin: { cookie: string; csrfToken: string };
const targets: TargetProcess[] = [];
const closers: Array<() => Promise<void>> = [];

before(async () => {
  split = await startSplitGateway();
  admin = await split.signIn();
});
after(async () => {
  for (const close of closers) await close();
  await Promise.all(targets.map((target) => target.close()));
  await split?.close();
});

/** A pool service at `path` over new targets `ids`, and the split gateway as the scenarios see it. */
async function poolOf(path: string, ids: string[], delayMs: number, fields: Record<string, unknown>) {
  const pool = await startTargetProcesses(ids, { delayMs });
  targets.push(...pool);
  const publicUrls = split.proxies.map((proxy) => proxy.url);
  const service = await createPoolService(split.adminUrl, admin, publicUrls, path, pool, { loadBalancing: 'round_robin', ...fields });
  const view = apiPoolView({
    publicUrls,
    metricsUrls: split.proxies.map((proxy) => `${proxy.internalUrl}/metrics`),
    apiUrl: split.adminUrl,
    admin,
    service,
    pool,
    connections: 6,
  });
  closers.push(view.close);
  return { pool, view };
}

describe('split: a pool of three targets, one killed (SIGKILL) under load through two proxy processes', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it on each proxy, and takes it back once its active check passes', async (t) => {
    const { pool, view } = await poolOf('/failover', ['a', 'b', 'c'], 15, FAILOVER_POOL_SETTINGS);
    await killOneUnderLoad(t, view, pool);
  });
});

describe('split: a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once, from both proxy processes', async () => {
    const { pool, view } = await poolOf('/alldown', ['x', 'y', 'z'], 0, ALL_DOWN_POOL_SETTINGS);
    await allTargetsDown(view, pool);
  });
});
