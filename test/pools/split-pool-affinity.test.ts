/**
 * Client affinity of a service's pool in split mode (issue 23, "Done when"): services made through
 * the admin process's API, each client sending its requests to two `start:proxy` processes in
 * turn (as behind a load balancer that does not stick), real target processes behind them
 * (test/support/target-process.ts), the scenarios of test/support/pool-scenarios.ts:
 * - `client_ip` (TRUST_PROXY loopback, clients told apart by `X-Forwarded-For`): a client keeps
 *   its target on both proxies; a SIGKILLed target's clients, and only they, move;
 * - `cookie`: the sticky cookie one proxy sets is honoured by the other (the key is shared), is
 *   opaque, scoped to the prefix, HttpOnly and never forwarded; only a dead target's clients move.
 */
import { after, before, describe, it } from 'node:test';
import { apiPoolView, createPoolService } from '../support/pool-gateways.js';
import { clientIpAffinity, cookieAffinity } from '../support/pool-scenarios.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startTargetProcesses, type TargetProcess } from '../support/target-process.js';

let split: SplitGateway;
let admin: { cookie: string; csrfToken: string };
const targets: TargetProcess[] = [];
const closers: Array<() => Promise<void>> = [];

before(async () => {
  split = await startSplitGateway({ TRUST_PROXY: 'loopback' });
  admin = await split.signIn();
});
after(async () => {
  for (const close of closers) await close();
  await Promise.all(targets.map((target) => target.close()));
  await split?.close();
});

async function poolOf(path: string, ids: string[], loadBalancing: string) {
  const pool = await startTargetProcesses(ids);
  targets.push(...pool);
  const publicUrls = split.proxies.map((proxy) => proxy.url);
  const service = await createPoolService(split.adminUrl, admin, publicUrls, path, pool, {
    loadBalancing,
    outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 },
  });
  const view = apiPoolView({ publicUrls, metricsUrls: split.proxies.map((proxy) => `${proxy.internalUrl}/metrics`), apiUrl: split.adminUrl, admin, service, pool, connections: 8 });
  closers.push(view.close);
  return { pool, view };
}

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
