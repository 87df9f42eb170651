/**
 * Client affinity of a service's pool (issue 23, "Done when"), on the data plane alone against
 * real target processes (test/support/target-process.ts), the scenarios of
 * test/support/pool-scenarios.ts:
 * - `client_ip` (the address as TRUST_PROXY resolves it: many clients behind a trusted loopback
 *   proxy, told apart by `X-Forwarded-For`): a client keeps its target, and a SIGKILLed target's
 *   clients move (each to one new target it then keeps) while every other client stays put;
 * - `cookie`: the sticky cookie (`gw_target`) is set once, names no internal address, is scoped
 *   to the service's prefix, HttpOnly, never reaches a target; a client keeps its target, and
 *   only a dead target's clients are moved (and given a new cookie).
 */
import { after, before, describe, it } from 'node:test';
import type { LoadBalancing, Service } from '../../shared/types.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { clientIpAffinity, cookieAffinity, type PoolGatewayView } from '../support/pool-scenarios.js';
import { PoolClient } from '../support/pool-traffic.js';
import { service } from '../support/samples.js';
import { startTargetProcesses, type TargetProcess } from '../support/target-process.js';

let plane: TestDataPlane;
let http: PoolClient;
const targets: TargetProcess[] = [];
const published: Service[] = [];

before(async () => {
  plane = await startDataPlane({ env: { TRUST_PROXY: 'loopback' } });
  http = new PoolClient(plane.origin, 16);
});
after(async () => {
  await http?.close();
  await Promise.all(targets.map((target) => target.close()));
  await plane?.close();
});

/** A service at `path` balancing by `loadBalancing` over new targets `ids`, and the data plane as the scenarios see it. */
async function poolOf(path: string, ids: string[], loadBalancing: LoadBalancing): Promise<{ pool: TargetProcess[]; view: PoolGatewayView }> {
  const pool = await startTargetProcesses(ids);
  targets.push(...pool);
  published.push(
    service({
      path,
      targetUrl: pool[0]!.url,
      targets: pool.map((target) => ({ url: target.url, weight: 1 })),
      loadBalancing,
      outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
    }),
  );
  await plane.publish(published);
  return { pool, view: { clients: [http], prefix: path, figures: async () => [] } };
}

describe('client_ip balancing', () => {
  it('keeps each client on its target, and moves only the clients of a killed target', async (t) => {
    const { pool, view } = await poolOf('/by-ip', ['ip-a', 'ip-b', 'ip-c'], 'client_ip');
    await clientIpAffinity(t, view, pool);
  });
});

describe('cookie balancing', () => {
  it('sets a sticky cookie once, opaque, scoped to the prefix, HttpOnly, never forwarded; keeps each client on its target; moves only the clients of a killed target', async (t) => {
    const { pool, view } = await poolOf('/sticky', ['ck-a', 'ck-b', 'ck-c'], 'cookie');
    await cookieAffinity(t, view, pool);
  });
});
