/**
 * Client affinity of a service's pool (issue 23, "Done when"), on the data plane alone against
 * real target processes (test/support/target-process.ts):
 * - `client_ip` (the address as TRUST_PROXY resolves it: many clients behind a trusted loopback
 *   proxy, told apart by `X-Forwarded-For`): a client keeps its target, and a SIGKILLed target's
 *   clients move (each to one new target it then keeps) while every other client stays put;
 * - `cookie`: the sticky cookie (`gw_target`) is set once, names no internal address, is scoped
 *   to the service's prefix, HttpOnly, never reaches a target; a client keeps its target, and
 *   only a dead target's clients are moved (and given a new cookie).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { LoadBalancing, Service } from '../../shared/types.js';
import { CookieJar } from '../support/cookie-jar.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { PoolClient, type Reply } from '../support/pool-traffic.js';
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

async function poolService(path: string, ids: string[], loadBalancing: LoadBalancing): Promise<TargetProcess[]> {
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
  return pool;
}

/** Runs `work` for each of `items`, `concurrency` at a time. */
async function eachLimited<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

const tally = (assigned: ReadonlyMap<unknown, string>): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const target of assigned.values()) counts[target] = (counts[target] ?? 0) + 1;
  return counts;
};

describe('client_ip balancing', () => {
  const CLIENTS = Array.from({ length: 240 }, (_, i) => `10.${20 + (i % 7)}.${i >> 4}.${(i * 37) % 251 + 1}`);

  /** `rounds` requests from `address`: the targets that answered them, in order. */
  async function from(address: string, rounds: number, tag: string): Promise<string[]> {
    const seen: string[] = [];
    for (let i = 0; i < rounds; i++) {
      const reply = await http.send(`/by-ip/${tag}/${i}`, { headers: { 'x-forwarded-for': address } });
      assert.equal(reply.status, 200, `${address}: ${reply.status} ${reply.error ?? reply.text}`);
      seen.push(reply.target!);
    }
    return seen;
  }

  it('keeps each client on its target, and moves only the clients of a killed target', async (t) => {
    const [, b] = (await poolService('/by-ip', ['ip-a', 'ip-b', 'ip-c'], 'client_ip')) as [TargetProcess, TargetProcess, TargetProcess];
    const before = new Map<string, string>();
    await eachLimited(CLIENTS, 12, async (address) => {
      const seen = await from(address, 3, 'before');
      assert.equal(new Set(seen).size, 1, `${address} moved between targets: ${seen}`);
      before.set(address, seen[0]!);
    });
    const shares = tally(before);
    t.diagnostic(`clients per target: ${JSON.stringify(shares)}`);
    for (const id of ['ip-a', 'ip-b', 'ip-c']) assert.ok((shares[id] ?? 0) >= 40, `${id} has ${shares[id] ?? 0} of 240 clients`);

    await b.kill();
    const afterKill = new Map<string, string>();
    await eachLimited(CLIENTS, 12, async (address) => {
      const seen = await from(address, 3, 'after');
      assert.equal(new Set(seen).size, 1, `${address} moved between targets after the kill: ${seen}`);
      afterKill.set(address, seen[0]!);
    });
    t.diagnostic(`after ip-b was killed: ${JSON.stringify(tally(afterKill))}`);
    const moved = CLIENTS.filter((address) => before.get(address) !== afterKill.get(address));
    const ofDead = CLIENTS.filter((address) => before.get(address) === 'ip-b');
    assert.deepEqual(moved, ofDead, 'the clients that moved are exactly the dead target\'s');
    // the dead target's clients are spread over both survivors, not all thrown on one
    const landed = tally(new Map(ofDead.map((address) => [address, afterKill.get(address)!])));
    assert.ok((landed['ip-a'] ?? 0) >= 10 && (landed['ip-c'] ?? 0) >= 10, `ip-b's clients went to ${JSON.stringify(landed)}`);
  });
});

describe('cookie balancing', () => {
  const COOKIE = /^gw_target=([^;]*)(;.*)?$/;

  interface Client {
    jar: CookieJar;
    /** The targets that answered it, in order. */
    seen: string[];
    /** The Set-Cookie values of `gw_target` it was given, in order. */
    given: string[];
  }

  /** One request of `client` to `/sticky/<path>`, its jar's cookies and a cookie of its own sent along. */
  async function visit(client: Client, path: string): Promise<Reply> {
    const url = `${plane.origin}/sticky/${path}`;
    const cookie = ['theme=dark', client.jar.header(url)].filter(Boolean).join('; ');
    const reply = await http.send(`/sticky/${path}`, { headers: { cookie } });
    assert.equal(reply.status, 200, `${reply.status} ${reply.error ?? reply.text}`);
    // the target gets the client's own cookie, never the gateway's
    assert.equal(reply.answer!.cookie, 'theme=dark', `the target got Cookie: ${reply.answer!.cookie}`);
    const setCookie = [reply.headers['set-cookie'] ?? []].flat().filter((value) => value.startsWith('gw_target='));
    client.given.push(...setCookie);
    client.jar.store(setCookie, url);
    client.seen.push(reply.target!);
    return reply;
  }

  it('sets a sticky cookie once, opaque, scoped to the prefix, HttpOnly, never forwarded; keeps each client on its target; moves only the clients of a killed target', async (t) => {
    const pool = await poolService('/sticky', ['ck-a', 'ck-b', 'ck-c'], 'cookie');
    const b = pool[1]!;
    const clients: Client[] = Array.from({ length: 60 }, () => ({ jar: new CookieJar(), seen: [], given: [] }));
    await eachLimited(clients, 12, async (client) => {
      for (let i = 0; i < 4; i++) await visit(client, `before/${i}`);
    });

    // One cookie per client, on its first answer only.
    const values = new Map<string, string>(); // cookie value → target
    for (const client of clients) {
      assert.equal(new Set(client.seen).size, 1, `a client moved between targets: ${client.seen}`);
      assert.equal(client.given.length, 1, `Set-Cookie ${client.given.length} times: ${client.given}`);
      const header = client.given[0]!;
      const [, value, attributes = ''] = COOKIE.exec(header)!;
      assert.match(value!, /^[A-Za-z0-9_-]{22}$/, `an opaque id: ${header}`);
      for (const target of pool) {
        assert.ok(!header.includes(String(target.port)) && !header.includes('127.0.0.1') && !header.includes(Buffer.from(target.url).toString('base64url').slice(0, 12)), `names an address: ${header}`);
      }
      const parts = attributes.split(';').map((part) => part.trim().toLowerCase()).filter(Boolean);
      assert.ok(parts.includes('path=/sticky'), `scoped to the prefix: ${header}`);
      assert.ok(parts.includes('httponly'), `HttpOnly: ${header}`);
      assert.ok(parts.includes('samesite=lax'), `SameSite=Lax: ${header}`);
      assert.ok(!parts.some((part) => part.startsWith('domain=') || part.startsWith('max-age=') || part.startsWith('expires=')), `a host-only session cookie: ${header}`);
      assert.equal(values.get(value!) ?? client.seen[0], client.seen[0], 'one cookie value names one target');
      values.set(value!, client.seen[0]!);
      // a browser sends it under the prefix only
      assert.equal(client.jar.get('gw_target', `${plane.origin}/sticky/x`), value);
      assert.equal(client.jar.get('gw_target', `${plane.origin}/other/x`), undefined);
      assert.equal(client.jar.get('gw_target', `${plane.origin}/stickyfoo`), undefined);
    }
    assert.equal(values.size, 3, 'one cookie value per target');
    const before = clients.map((client) => client.seen[0]!);
    t.diagnostic(`clients per target: ${JSON.stringify(tally(new Map(before.map((target, i) => [i, target]))))}`);
    for (const id of ['ck-a', 'ck-b', 'ck-c']) assert.equal(before.filter((target) => target === id).length, 20, `round robin over new clients: ${id}`);

    // A made-up value names no target: such a client is balanced as a new one, and given a cookie.
    const forger: Client = { jar: new CookieJar(), seen: [], given: [] };
    forger.jar.store('gw_target=AAAAAAAAAAAAAAAAAAAAAA; Path=/sticky', `${plane.origin}/sticky/`);
    await visit(forger, 'forged');
    assert.equal(forger.given.length, 1, 'a forged cookie is replaced');
    assert.notEqual(COOKIE.exec(forger.given[0]!)![1], 'AAAAAAAAAAAAAAAAAAAAAA');

    await b.kill();
    for (const client of clients) client.given.length = 0;
    await eachLimited(clients, 12, async (client) => {
      for (let i = 0; i < 4; i++) await visit(client, `after/${i}`);
    });
    clients.forEach((client, i) => {
      const after = client.seen.slice(4);
      assert.equal(new Set(after).size, 1, `a client moved between targets after the kill: ${after}`);
      if (before[i] === 'ck-b') {
        assert.notEqual(after[0], 'ck-b');
        assert.equal(client.given.length, 1, `the dead target's client is given a new cookie once: ${client.given}`);
        assert.equal(values.get(COOKIE.exec(client.given[0]!)![1]!), after[0], 'the new cookie names its new target');
      } else {
        assert.equal(after[0], before[i], 'a live target\'s client moved');
        assert.deepEqual(client.given, [], 'a live target\'s client was given a cookie');
      }
    });
  });
});
