/**
 * How a service's pool shares its requests (issue 23, "Done when"), on the data plane alone
 * against real target processes (test/support/target-process.ts), the scenarios of
 * test/support/pool-scenarios.ts:
 * - `round_robin` with weights 1, 2 and 5: over 10,000 requests each target gets its share
 *   within 5 %;
 * - `least_requests` with one target that sends its response head only after 10 s: under
 *   concurrent load it gets a small fraction of what each fast target gets.
 */
import { after, before, describe, it } from 'node:test';
import type { Service } from '../../shared/types.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { slowTargetUnderLeastRequests, weightedShares, type PoolGatewayView } from '../support/pool-scenarios.js';
import { PoolClient } from '../support/pool-traffic.js';
import { service } from '../support/samples.js';
import { startTargetProcess, type TargetProcess } from '../support/target-process.js';

let plane: TestDataPlane;
const targets: TargetProcess[] = [];
const clients: PoolClient[] = [];
const published: Service[] = [];

before(async () => {
  plane = await startDataPlane();
});
after(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await Promise.all(targets.map((target) => target.close()));
  await plane?.close();
});

async function target(id: string, delayMs = 0): Promise<TargetProcess> {
  const started = await startTargetProcess(id, { delayMs });
  targets.push(started);
  return started;
}

/** Publishes `fields` as a service; the data plane as the scenarios see it (one proxy, no metrics needed). */
async function publish(fields: Partial<Service> & Pick<Service, 'path' | 'targetUrl'>): Promise<PoolGatewayView> {
  published.push(service(fields));
  await plane.publish(published);
  const client = new PoolClient(plane.origin, 24);
  clients.push(client);
  return { clients: [client], prefix: fields.path, figures: async () => [] };
}

describe('round_robin with weights 1, 2 and 5', () => {
  it('gives each target its share of 10,000 requests within 5 %', async (t) => {
    const weighted = [
      { target: await target('w1'), weight: 1 },
      { target: await target('w2'), weight: 2 },
      { target: await target('w5'), weight: 5 },
    ];
    const view = await publish({
      path: '/weighted',
      targetUrl: weighted[0]!.target.url,
      targets: weighted.map(({ target, weight }) => ({ url: target.url, weight })),
      loadBalancing: 'round_robin',
    });
    await weightedShares(t, view, weighted);
  });
});

describe('least_requests with a slow target (response head after 10 s)', () => {
  it('sends the slow target a small fraction of what each fast one gets', async (t) => {
    const [fast1, fast2, slow] = [await target('fast1'), await target('fast2'), await target('slow', 10_000)];
    const view = await publish({
      path: '/least',
      targetUrl: fast1.url,
      targets: [fast1, slow, fast2].map((process) => ({ url: process.url, weight: 1 })),
      loadBalancing: 'least_requests',
    });
    await slowTargetUnderLeastRequests(t, view, [fast1, fast2], slow);
  });
});
