/**
 * Client affinity of a service's pool in split mode (design.md §4.13): services made through
 * the admin process's API, each client sending its requests to two `start:proxy` processes in
 * turn (as behind a load balancer that does not stick), real target processes behind them
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts:
 * - `client_ip` (TRUST_PROXY loopback, clients told apart by `X-Forwarded-For`): a client keeps
 *   its target on both proxies; a SIGKILLed target's clients, and only they, move;
 * - `cookie`: the sticky cookie one proxy sets is honoured by the other (the key is shared), is
 *   opaque, scoped to the prefix, HttpOnly and never forwarded; only a dead target's clients move.
 */
import { describe, it } from 'node:test';
import { apiPools, startSplitPoolGateway } from '../support/pool-gateways.js';
import { clientIpAffinity, cookieAffinity } from '../support/pool-scenarios.js';

const pools = apiPools(() => startSplitPoolGateway({ TRUST_PROXY: 'loopback' }), { connections: 8 });

/** A service at `path` balancing by `loadBalancing` over new targets `ids`, and the split gateway as the scenarios see it. */
const poolOf = (path: string, ids: string[], loadBalancing: string) =>
  pools.pool(path, ids, {}, { loadBalancing, outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 } });

describe('split: client_ip balancing over two proxy processes', () => {
  it('keeps each client on its target on both proxies, and moves only the clients of a killed target', async (t) => {
    const { pool, view } = await poolOf('/by-ip', ['ip-a', 'ip-b', 'ip-c'], 'client_ip');
    await clientIpAffinity(t, view, pool);
  });
});

describe('split: cookie balancing over two proxy processes', () => {
  it('a sticky cookie set by one proxy keeps the client on its target on the other; opaque, scoped, HttpOnly, never forwarded; only a dead target\'s clients move', async (t) => {
    const { pool, view } = await poolOf('/sticky', ['ck-a', 'ck-b', 'ck-c'], 'cookie');
    await cookieAffinity(t, view, pool);
  });
});
