/**
 * How a service's pool shares its requests (design.md §4.13), on the data plane alone
 * against real target processes (test/support/target-process.ts), the scenarios of
 * test/support/pool-scenarios.ts:
 * - `round_robin` with weights 1, 2 and 5: over 10,000 requests each target gets its share
 *   within 5 %;
 * - `least_requests` with one target that sends its response head only after 10 s: under
 *   concurrent load it gets a small fraction of what each fast target gets.
 */
import { describe, it } from 'node:test';
import type { Service } from '../../shared/types.js';
import { dataPlanePools } from '../support/pool-gateways.js';
import { slowTargetUnderLeastRequests, weightedShares, type PoolGatewayView } from '../support/pool-scenarios.js';
import type { TargetProcess } from '../support/target-process.js';

const pools = dataPlanePools();

/** Publishes a service at `path` over `pool` with `fields`; the data plane as the scenarios see it. */
async function publish(path: string, pool: TargetProcess[], fields: Partial<Service>): Promise<PoolGatewayView> {
  return pools.view(await pools.publish(path, pool, fields), pools.client(24));
}

describe('round_robin with weights 1, 2 and 5', () => {
  it('gives each target its share of 10,000 requests within 5 %', async (t) => {
    const weighted = [
      { target: await pools.target('w1'), weight: 1 },
      { target: await pools.target('w2'), weight: 2 },
      { target: await pools.target('w5'), weight: 5 },
    ];
    const view = await publish('/weighted', weighted.map(({ target }) => target), {
      targets: weighted.map(({ target, weight }) => ({ url: target.url, weight })),
      loadBalancing: 'round_robin',
    });
    await weightedShares(t, view, weighted);
  });
});

describe('least_requests with a slow target (response head after 10 s)', () => {
  it('sends the slow target a small fraction of what each fast one gets', async (t) => {
    const [fast1, fast2, slow] = [await pools.target('fast1'), await pools.target('fast2'), await pools.target('slow', { delayMs: 10_000 })];
    const view = await publish('/least', [fast1, slow, fast2], { loadBalancing: 'least_requests' });
    await slowTargetUnderLeastRequests(t, view, [fast1, fast2], slow);
  });
});
