/**
 * Client affinity of a service's pool (design.md §4.13), on the data plane alone against
 * real target processes (test/support/target-process.ts), the scenarios of
 * test/support/pool-scenarios.ts:
 * - `client_ip` (the address as TRUST_PROXY resolves it: many clients behind a trusted loopback
 *   proxy, told apart by `X-Forwarded-For`): a client keeps its target, and a SIGKILLed target's
 *   clients move (each to one new target it then keeps) while every other client stays put;
 * - `cookie`: the sticky cookie (`gw_target`) is set once, names no internal address, is scoped
 *   to the service's prefix, HttpOnly, never reaches a target; a client keeps its target, and
 *   only a dead target's clients are moved (and given a new cookie); a target cannot set it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LoadBalancing } from '../../shared/types.js';
import { dataPlanePools } from '../support/pool-gateways.js';
import { clientIpAffinity, cookieAffinity, type PoolGatewayView } from '../support/pool-scenarios.js';
import type { PoolClient, Reply } from '../support/pool-traffic.js';
import type { TargetBehaviour, TargetProcess } from '../support/target-process.js';

const pools = dataPlanePools({ env: { TRUST_PROXY: 'loopback' } });
let shared: PoolClient | undefined;
/** The one client of every test here, made at its first use (the data plane is up by then). */
const http = (): PoolClient => (shared ??= pools.client(16));

/** A service at `path` balancing by `loadBalancing` over new targets `ids`, and the data plane as the scenarios see it. */
async function poolOf(path: string, ids: string[], loadBalancing: LoadBalancing): Promise<{ pool: TargetProcess[]; view: PoolGatewayView }> {
  const pool = await pools.targets(ids);
  const svc = await pools.publish(path, pool, { loadBalancing, outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 60 } });
  return { pool, view: pools.view(svc, http()) };
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

describe('cookie balancing and the targets\' own cookies', () => {
  const outlier = { maxFails: 100, windowSeconds: 1, ejectSeconds: 1 };

  /** A cookie-balanced service at `path` over new targets `ids` answering as `behaviour` says. */
  async function stickyPool(path: string, ids: string[], behaviour: Partial<TargetBehaviour>): Promise<TargetProcess[]> {
    const pool = await pools.targets(ids, behaviour);
    await pools.publish(path, pool, { loadBalancing: 'cookie', outlierDetection: outlier });
    return pool;
  }
  const setCookies = (reply: Reply): string[] => [reply.headers['set-cookie'] ?? []].flat();

  it('a target cannot set gw_target; its own cookies reach the client beside the gateway\'s', async () => {
    await stickyPool('/own-cookies', ['own-a', 'own-b'], { setCookies: ['gw_target=set-by-the-target; Path=/', 'app=1; Path=/'] });
    const first = await http().send('/own-cookies/1');
    assert.equal(first.status, 200);
    const given = setCookies(first);
    assert.equal(given.filter((value) => value.startsWith('gw_target=')).length, 1, `one gw_target: ${given}`);
    assert.match(given.find((value) => value.startsWith('gw_target='))!, /^gw_target=[A-Za-z0-9_-]{22}; Path=\/own-cookies;/);
    assert.ok(given.includes('app=1; Path=/own-cookies'), `the target's own cookie, its path mapped to the prefix: ${given}`);
    const sticky = given.find((value) => value.startsWith('gw_target='))!.split(';')[0]!;
    for (let i = 0; i < 4; i++) {
      const next = await http().send(`/own-cookies/next/${i}`, { headers: { cookie: `${sticky}; app=1` } });
      assert.equal(next.target, first.target, 'kept on its target');
      assert.deepEqual(setCookies(next), ['app=1; Path=/own-cookies'], 'only the target\'s own cookie');
      assert.equal(next.answer!.cookie, 'app=1');
    }
  });

  it('a single 503 from a client\'s target, retried on another, does not move the client while its target is in rotation', async () => {
    const pool = await stickyPool('/one-503', ['one-a', 'one-b'], {});
    const first = await http().send('/one-503/1');
    const sticky = setCookies(first).find((value) => value.startsWith('gw_target='))!.split(';')[0]!;
    const own = pool.find((target) => target.id === first.target)!;
    await own.set({ status: 503 });
    const retried = await http().send('/one-503/2', { headers: { cookie: sticky } });
    await own.set({ status: 200 });
    assert.equal(retried.status, 200, 'the GET was retried on the other target');
    assert.notEqual(retried.target, own.id);
    assert.deepEqual(setCookies(retried).filter((value) => value.startsWith('gw_target=')), [], 'the client was re-pinned to the other target');
  });
});
