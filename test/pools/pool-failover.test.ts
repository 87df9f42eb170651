/**
 * A service's pool of targets in the embedded gateway (design.md §4.13), made through the
 * admin API (`POST /api/services` with `targets`) and proxied to real target processes
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts:
 * - three targets under load, one SIGKILLed: no GET fails, only POSTs in flight to it do; it is
 *   ejected (`/metrics`, `GET /api/services/:id/health`) and gets nothing more; started again and
 *   passing its active check, it is back and gets traffic;
 * - every target killed: 503 `Service unavailable` to each request, at once.
 */
import { describe, it } from 'node:test';
import { apiPools, startEmbeddedPoolGateway } from '../support/pool-gateways.js';
import { ALL_DOWN_POOL_SETTINGS, allTargetsDown, FAILOVER_POOL_SETTINGS, killOneUnderLoad } from '../support/pool-scenarios.js';

const pools = apiPools(() => startEmbeddedPoolGateway());

describe('embedded: a pool of three targets, one killed (SIGKILL) under load', () => {
  it('fails no GET, fails only POSTs in flight to the dead target, ejects it, and takes it back once its active check passes', async (t) => {
    const { pool, view } = await pools.pool('/failover', ['a', 'b', 'c'], { delayMs: 15 }, FAILOVER_POOL_SETTINGS);
    await killOneUnderLoad(t, view, pool);
  });
});

describe('embedded: a pool whose every target is down', () => {
  it('answers 503 Service unavailable to each request at once (GET and POST, one at a time and concurrently)', async () => {
    const { pool, view } = await pools.pool('/alldown', ['x', 'y', 'z'], {}, ALL_DOWN_POOL_SETTINGS);
    await allTargetsDown(view, pool);
  });
});
