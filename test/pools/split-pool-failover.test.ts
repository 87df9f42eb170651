/**
 * A service's pool of targets in split mode (design.md §4.13): made through the admin
 * process's API, proxied by two `start:proxy` processes over a real Redis to real target processes
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts with the load
 * spread over both proxies, each judging the targets on its own:
 * - three targets under load, one SIGKILLed: no GET fails, only POSTs in flight to it do; each
 *   proxy ejects it (its own `/metrics`; the admin's `GET /api/services/:id/health` shows both
 *   proxies' views, reported over Redis) and sends it nothing more; started again and passing its
 *   active check, it is back on both and gets traffic;
 * - every target killed: 503 `Service unavailable` to each request, at once, from both proxies.
 */
import { describe, it } from 'node:test';
import { apiPools, startSplitPoolGateway } from '../support/pool-gateways.js';
import { ALL_DOWN_POOL_SETTINGS, allTargetsDown, FAILOVER_POOL_SETTINGS, killOneUnderLoad } from '../support/pool-scenarios.js';

const pools = apiPools(() => startSplitPoolGateway(), { connections: 6 });

describe('split: a pool of three targets, one killed (SIGKILL) under load through two proxy processes', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it on each proxy, and takes it back once its active check passes', async (t) => {
    const { pool, view } = await pools.pool('/failover', ['a', 'b', 'c'], { delayMs: 15 }, FAILOVER_POOL_SETTINGS);
    await killOneUnderLoad(t, view, pool);
  });
});

describe('split: a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once, from both proxy processes', async () => {
    const { pool, view } = await pools.pool('/alldown', ['x', 'y', 'z'], {}, ALL_DOWN_POOL_SETTINGS);
    await allTargetsDown(view, pool);
  });
});
