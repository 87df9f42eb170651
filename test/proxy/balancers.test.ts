/**
 * The balancers of a pool (proxy/pool/balancing/) and the pool's pick (proxy/pool/target-pool.ts),
 * as an operator of a pool of targets would see them, without a network: pools are built the way
 * the data plane builds them (a RouteTable over a registry entry), targets leave rotation through
 * their TargetHealth (outlier detection on a mocked clock, active-check verdicts), and requests in
 * flight are counted through `requestSent()` / `requestSettled()` as the forwarder does.
 *
 * - smooth weighted round robin: exact shares, nginx's interleaving, and a target out of rotation
 *   giving its share to the others;
 * - client-ip hashing: one address keeps one target (in every process and snapshot), addresses
 *   spread by weight, and a target's leaving moves its own clients only;
 * - least requests: fewer requests in flight per unit of weight wins, ties are spread;
 * - sticky cookie: a cookie naming a target in rotation goes there, any other is balanced;
 * - the pool's pick: never a tried target, available ones first, never failing closed.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { Balancer, BalancingInput } from '../../proxy/pool/balancing/balancer.js';
import { SmoothRoundRobin } from '../../proxy/pool/balancing/smooth-round-robin.js';
import type { RouteTarget } from '../../proxy/pool/route-target.js';
import type { TargetPool } from '../../proxy/pool/target-pool.js';
import { RouteTable } from '../../proxy/routing/route-table.js';
import type { HealthCheck, LoadBalancing, Service } from '../../shared/types.js';
import { sampleService } from '../support/samples.js';

const CHECK: HealthCheck = { path: '/healthz', intervalSeconds: 10, timeoutMs: 1000, healthyThreshold: 1, unhealthyThreshold: 1, expectStatus: '2xx' };
/** One failure ejects a target for 30 s (unless it is the pool's last available one). */
const EJECT_AT_ONCE = { maxFails: 1, windowSeconds: 10, ejectSeconds: 30 };
const NAMES = 'abcdefgh';

/** The pool of a service at `/app` whose targets have `weights` (target `i` at http://10.0.0.(i+1):8080). */
function poolOf(weights: readonly number[], loadBalancing: LoadBalancing, overrides: Partial<Service> = {}, n = 1): TargetPool {
  const service = sampleService(n, {
    path: '/app',
    targets: weights.map((weight, i) => ({ url: `http://10.0.0.${i + 1}:8080`, weight })),
    loadBalancing,
    outlierDetection: EJECT_AT_ONCE,
    ...overrides,
  });
  return new RouteTable([service]).lookup('/app')!.pool;
}

const input = (clientIp = '192.0.2.10', stickyId?: string): BalancingInput => ({ clientIp, stickyId });
/** A target's letter: `a` for the pool's first. */
const nameOf = (pool: TargetPool, target: RouteTarget | undefined): string => (target === undefined ? '-' : NAMES[pool.targets.indexOf(target)]!);

/** The letters of `count` picks in a row (requests that each reached their first target). */
function picks(pool: TargetPool, count: number, request: BalancingInput = input()): string {
  let sequence = '';
  for (let i = 0; i < count; i++) sequence += nameOf(pool, pool.pick(request));
  return sequence;
}

/** How many times each target's letter occurs in `sequence`, by letter. */
function tally(sequence: string, letters: number): number[] {
  const counts = new Array<number>(letters).fill(0);
  for (const letter of sequence) counts[NAMES.indexOf(letter)]!++;
  return counts;
}

/** Ejects target `index` of `pool` by one failure (the pool's outlier detection ejects at the first). */
function eject(pool: TargetPool, index: number): void {
  const target = pool.targets[index]!;
  target.health.failed('ECONNREFUSED', () => pool.mayEject(target));
  assert.equal(target.health.state, 'ejected', `target ${NAMES[index]} ejected`);
}

/** The i-th of a spread of distinct client addresses. */
const address = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;

describe('smooth weighted round robin', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  for (const weights of [[1, 2, 5], [5, 1, 1], [3, 3, 1], [100, 1], [7, 7, 7, 7]]) {
    const total = weights.reduce((sum, weight) => sum + weight, 0);

    it(`gives weights ${weights.join(', ')} exactly their shares over 10 × ${total} picks`, () => {
      const pool = poolOf(weights, 'round_robin');
      assert.deepEqual(tally(picks(pool, 10 * total), weights.length), weights.map((weight) => 10 * weight));
    });

    it(`never gives weights ${weights.join(', ')} more than a weight's share in any ${total} picks in a row`, () => {
      const pool = poolOf(weights, 'round_robin');
      const sequence = picks(pool, 5 * total);
      for (let start = 0; start + total <= sequence.length; start++) {
        const counts = tally(sequence.slice(start, start + total), weights.length);
        counts.forEach((count, i) => {
          const bound = Math.ceil((weights[i]! / total) * total); // its weight
          assert.ok(count <= bound, `${NAMES[i]} ${count} times in picks ${start}–${start + total - 1} (${sequence}), at most ${bound}`);
        });
      }
    });
  }

  it('interleaves weights 5, 1, 1 as nginx does: a a b a c a a, again and again', () => {
    const pool = poolOf([5, 1, 1], 'round_robin');
    assert.equal(picks(pool, 21), 'aabacaa'.repeat(3));
  });

  it('interleaves weights 1, 2, 5 with no target twice in a row but the heaviest', () => {
    const pool = poolOf([1, 2, 5], 'round_robin');
    const sequence = picks(pool, 80);
    assert.doesNotMatch(sequence, /aa|bb/);
    assert.doesNotMatch(sequence, /ccc/, 'weight 5 of 8 never three times in a row');
  });

  it('skips a target that is not eligible from the start: the others share its turns by their weights', () => {
    const pool = poolOf([1, 2, 5], 'round_robin');
    const balancer: Balancer = new SmoothRoundRobin(pool.targets.length);
    const notC = (target: RouteTarget): boolean => target !== pool.targets[2];
    let sequence = '';
    for (let i = 0; i < 30; i++) sequence += nameOf(pool, balancer.choose(pool.targets, notC, input()));
    assert.deepEqual(tally(sequence, 3), [10, 20, 0]);
    assert.equal(sequence, 'bab'.repeat(10));
  });

  it('gives an ejected target’s share to the others, and takes it back when the ejection ends', () => {
    const pool = poolOf([1, 2, 5], 'round_robin');
    picks(pool, 5); // midway through a round
    eject(pool, 2);
    const [a, b, c] = tally(picks(pool, 300), 3);
    assert.equal(c, 0, 'the ejected target gets nothing');
    assert.ok(Math.abs(a! - 100) <= 2 && Math.abs(b! - 200) <= 2, `a ${a}, b ${b}: 1 to 2`);
    mock.timers.tick(30_000);
    assert.equal(pool.targets[2]!.health.state, 'healthy');
    const back = tally(picks(pool, 800), 3);
    back.forEach((count, i) => assert.ok(Math.abs(count - [100, 200, 500][i]!) <= 8, `${NAMES[i]} ${count} of 800 after the return (${back})`));
  });

  it('keeps one round per pool: two services do not share a sequence', () => {
    const first = poolOf([5, 1, 1], 'round_robin', {}, 1);
    const second = poolOf([5, 1, 1], 'round_robin', {}, 2);
    assert.equal(picks(first, 3), 'aab');
    assert.equal(picks(second, 7), 'aabacaa');
    assert.equal(picks(first, 4), 'acaa');
  });
});

describe('client-ip hashing', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  /** The target letter of each of `count` addresses. */
  const assignment = (pool: TargetPool, count: number): string[] => Array.from({ length: count }, (_, i) => nameOf(pool, pool.pick(input(address(i)))));

  it('sends one address to one target, request after request', () => {
    const pool = poolOf([1, 1, 1, 1], 'client_ip');
    const first = assignment(pool, 500);
    for (let round = 0; round < 3; round++) assert.deepEqual(assignment(pool, 500), first);
    for (const ip of ['2001:db8::1', '2001:db8::2', '198.51.100.7', '::ffff:192.0.2.1']) {
      const target = pool.pick(input(ip));
      for (let i = 0; i < 20; i++) assert.equal(pool.pick(input(ip)), target, ip);
    }
  });

  it('sends an address to the same target in every process and snapshot, whatever the order of the targets', () => {
    const weights = [1, 2, 3, 4];
    const pool = poolOf(weights, 'client_ip');
    const urls = (p: TargetPool, letters: string[]): string[] => letters.map((letter) => p.targets[NAMES.indexOf(letter)]!.url);
    const expected = urls(pool, assignment(pool, 2000));
    const another = poolOf(weights, 'client_ip'); // another process: a table and health book of its own
    assert.deepEqual(urls(another, assignment(another, 2000)), expected);
    const reordered = new RouteTable([
      sampleService(1, {
        path: '/app',
        targets: [...pool.targets].reverse().map(({ url, weight }) => ({ url, weight })),
        loadBalancing: 'client_ip',
      }),
    ]).lookup('/app')!.pool;
    assert.deepEqual(urls(reordered, assignment(reordered, 2000)), expected);
  });

  for (const weights of [[1, 1, 1, 1], [1, 2, 5], [1, 2, 3, 4]]) {
    it(`spreads 10,000 addresses over weights ${weights.join(', ')}, each target within 5 % of its share`, () => {
      const pool = poolOf(weights, 'client_ip');
      const counts = tally(assignment(pool, 10_000).join(''), weights.length);
      const total = weights.reduce((sum, weight) => sum + weight, 0);
      counts.forEach((count, i) => {
        const share = (10_000 * weights[i]!) / total;
        assert.ok(Math.abs(count - share) <= 0.05 * share, `${NAMES[i]}: ${count} addresses, its share ${share} (${counts})`);
      });
    });
  }

  it('moves only the clients of a target that leaves, spread over the others, and brings them back when it returns', () => {
    const pool = poolOf([1, 1, 1, 1], 'client_ip');
    const before = assignment(pool, 4000);
    eject(pool, 1);
    const during = assignment(pool, 4000);
    const moved = new Map<string, number>();
    before.forEach((target, i) => {
      if (target === 'b') moved.set(during[i]!, (moved.get(during[i]!) ?? 0) + 1);
      else assert.equal(during[i], target, `client ${address(i)} of ${target} kept its target`);
    });
    assert.equal(moved.has('b'), false);
    const leaving = before.filter((target) => target === 'b').length;
    for (const letter of ['a', 'c', 'd']) {
      const count = moved.get(letter) ?? 0;
      assert.ok(count > leaving / 3 - leaving * 0.1 && count < leaving / 3 + leaving * 0.1, `${count} of b's ${leaving} clients went to ${letter}`);
    }
    mock.timers.tick(30_000);
    assert.deepEqual(assignment(pool, 4000), before, 'every client back on its own target');
  });

  it('moves only the clients a new target takes, about its share of them', () => {
    const before = poolOf([1, 1, 1], 'client_ip');
    const after = poolOf([1, 1, 1, 1], 'client_ip'); // a fourth target registered
    const old = assignment(before, 4000);
    const now = assignment(after, 4000);
    let taken = 0;
    old.forEach((target, i) => {
      if (now[i] === 'd') taken++;
      else assert.equal(now[i], target, `client ${address(i)} kept ${target}`);
    });
    assert.ok(taken > 900 && taken < 1100, `the new target took ${taken} of 4000 clients`);
  });

  it('follows a reweighing: a heavier target only gains clients', () => {
    const light = poolOf([1, 1, 1], 'client_ip');
    const heavy = poolOf([1, 1, 4], 'client_ip');
    const old = assignment(light, 4000);
    const now = assignment(heavy, 4000);
    old.forEach((target, i) => {
      if (target === 'c') assert.equal(now[i], 'c', `client ${address(i)} stays on the heavier target`);
      else assert.ok(now[i] === target || now[i] === 'c', `client ${address(i)} stays or moves to the heavier target`);
    });
    const share = now.filter((target) => target === 'c').length / 4000;
    assert.ok(Math.abs(share - 4 / 6) < 0.03, `the heavier target's share ${share}`);
  });
});

describe('least requests', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  /** Puts `count` requests in flight to target `index` (the forwarder's `requestSent`). */
  const inFlight = (pool: TargetPool, index: number, count: number): void => {
    for (let i = 0; i < count; i++) pool.targets[index]!.health.requestSent();
  };
  const settle = (pool: TargetPool, index: number, count: number): void => {
    for (let i = 0; i < count; i++) pool.targets[index]!.health.requestSettled();
  };

  it('of two targets, always picks the one with fewer requests in flight', () => {
    const pool = poolOf([1, 1], 'least_requests');
    inFlight(pool, 0, 5);
    settle(pool, 0, 2); // three still in flight
    inFlight(pool, 1, 2);
    assert.deepEqual([pool.targets[0]!.health.active, pool.targets[1]!.health.active], [3, 2]);
    assert.equal(picks(pool, 200), 'b'.repeat(200));
    settle(pool, 0, 3); // a is idle now
    assert.equal(picks(pool, 200), 'a'.repeat(200));
  });

  it('spreads picks between targets with as many requests in flight', () => {
    const pool = poolOf([1, 1], 'least_requests');
    inFlight(pool, 0, 4);
    inFlight(pool, 1, 4);
    const [a, b] = tally(picks(pool, 2000), 2);
    assert.ok(a! > 700 && b! > 700, `a ${a}, b ${b} of 2000`);
  });

  it('counts requests in flight per unit of weight', () => {
    const pool = poolOf([2, 1], 'least_requests');
    inFlight(pool, 0, 1);
    inFlight(pool, 1, 1);
    assert.equal(picks(pool, 200), 'a'.repeat(200), 'weight 2 with 1 in flight beats weight 1 with 1');
    inFlight(pool, 0, 1);
    const [a, b] = tally(picks(pool, 2000), 2);
    assert.ok(a! > 700 && b! > 700, `weight 2 with 2 in flight ties weight 1 with 1: a ${a}, b ${b} of 2000`);
    inFlight(pool, 0, 1);
    assert.equal(picks(pool, 200), 'b'.repeat(200), 'weight 1 with 1 in flight beats weight 2 with 3');
  });

  it('of three or more, never picks the busiest, and picks the idlest most', () => {
    const pool = poolOf([1, 1, 1, 1], 'least_requests');
    inFlight(pool, 0, 1);
    inFlight(pool, 1, 2);
    inFlight(pool, 2, 3);
    inFlight(pool, 3, 9);
    const counts = tally(picks(pool, 3000), 4);
    assert.equal(counts[3], 0, `the busiest target never (${counts})`);
    assert.ok(counts[0]! > counts[1]! && counts[1]! > counts[2]! && counts[2]! > 0, `fewer in flight, more picks (${counts})`);
    assert.ok(counts[0]! > 1200, `the idlest wins whenever drawn, about half the picks (${counts})`);
  });

  it('sends a slow target, whose requests pile up, next to nothing while the others answer at once', () => {
    const pool = poolOf([1, 1, 1], 'least_requests');
    const counts = [0, 0, 0];
    for (let i = 0; i < 600; i++) {
      const target = pool.pick(input())!;
      const index = pool.targets.indexOf(target);
      counts[index]!++;
      target.health.requestSent();
      if (index !== 2) target.health.requestSettled(); // a and b answer at once; c never does
    }
    assert.ok(counts[2]! <= 1, `the slow target got ${counts[2]} of 600`);
    assert.equal(pool.targets[2]!.health.active, counts[2]);
    assert.equal(pool.targets[0]!.health.requests + pool.targets[1]!.health.requests + pool.targets[2]!.health.requests, 600);
  });

  it('never picks a target out of rotation, however idle', () => {
    const pool = poolOf([1, 1, 1], 'least_requests');
    inFlight(pool, 0, 7);
    inFlight(pool, 2, 7);
    eject(pool, 1);
    assert.equal(pool.targets[1]!.health.active, 0);
    const counts = tally(picks(pool, 1000), 3);
    assert.equal(counts[1], 0);
    assert.ok(counts[0]! > 300 && counts[2]! > 300, `${counts}`);
  });
});

describe('sticky cookie balancing', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  it('sends a request whose cookie names a target in rotation to that target, whatever else goes on', () => {
    const pool = poolOf([1, 1, 1], 'cookie');
    for (let round = 0; round < 5; round++) {
      for (const target of pool.targets) {
        assert.equal(pool.pick(input(address(round), target.stickyId)), target);
        pool.pick(input()); // other clients, without a cookie, in between
      }
    }
  });

  it('gives each target an id of its own, naming no address', () => {
    const pool = poolOf([1, 1, 1], 'cookie');
    const ids = pool.targets.map((target) => target.stickyId);
    assert.equal(new Set(ids).size, 3);
    for (const id of ids) {
      assert.match(id, /^[A-Za-z0-9_-]{22}$/);
      assert.doesNotMatch(id, /10\.0\.0/);
    }
  });

  it('balances a request without a cookie by smooth weighted round robin', () => {
    const pool = poolOf([5, 1, 1], 'cookie');
    assert.equal(picks(pool, 14), 'aabacaa'.repeat(2));
  });

  it('balances a request whose cookie names a target out of rotation among the others', () => {
    const pool = poolOf([1, 1, 1], 'cookie');
    eject(pool, 0);
    const sequence = picks(pool, 40, input('192.0.2.10', pool.targets[0]!.stickyId));
    assert.deepEqual(tally(sequence, 3), [0, 20, 20]);
    mock.timers.tick(30_000);
    assert.equal(pool.pick(input('192.0.2.10', pool.targets[0]!.stickyId)), pool.targets[0], 'the same cookie, once the target is back');
  });

  it('balances a request whose cookie names no target of the service as one without a cookie', () => {
    const pool = poolOf([2, 1, 1], 'cookie');
    const otherService = poolOf([2, 1, 1], 'cookie', {}, 2); // same urls, another service id
    for (const stickyId of ['made-up', '', otherService.targets[0]!.stickyId, pool.targets[0]!.url]) {
      assert.deepEqual(tally(picks(pool, 40, input('192.0.2.10', stickyId)), 3), [20, 10, 10], `cookie ${JSON.stringify(stickyId)}`);
    }
  });

  it('sends a retry elsewhere even when the cookie names the target already tried', () => {
    const pool = poolOf([1, 1, 1], 'cookie');
    const first = pool.targets[1]!;
    const request = input('192.0.2.10', first.stickyId);
    assert.equal(pool.pick(request), first);
    const retry = pool.pick(request, [first]);
    assert.ok(retry !== undefined && retry !== first);
  });
});

describe('TargetPool.pick', () => {
  beforeEach(() => mock.timers.enable({ apis: ['Date'], now: 1_000_000 }));
  afterEach(() => mock.timers.reset());

  const MODES: LoadBalancing[] = ['round_robin', 'least_requests', 'client_ip', 'cookie'];
  /** Every subset of `targets`. */
  const subsets = <T>(items: readonly T[]): T[][] => Array.from({ length: 2 ** items.length }, (_, mask) => items.filter((_, i) => mask & (1 << i)));

  for (const mode of MODES) {
    it(`${mode}: never picks a tried target, and picks none once all were tried`, () => {
      const pool = poolOf([1, 2, 3, 4], mode);
      for (const tried of subsets(pool.targets)) {
        for (let i = 0; i < 20; i++) {
          const request = input(address(i), pool.targets[i % 4]!.stickyId);
          const picked = pool.pick(request, tried);
          if (tried.length === pool.targets.length) assert.equal(picked, undefined);
          else assert.ok(picked !== undefined && !tried.includes(picked), `tried ${tried.map((t) => nameOf(pool, t)).join('')}, picked ${nameOf(pool, picked)}`);
        }
      }
    });

    it(`${mode}: prefers an untried target in rotation, and tries the ones out of rotation before giving up`, () => {
      const pool = poolOf([1, 1, 1, 1], mode);
      eject(pool, 0);
      eject(pool, 3);
      const [a, b, c, d] = pool.targets as [RouteTarget, RouteTarget, RouteTarget, RouteTarget];
      for (let i = 0; i < 20; i++) {
        const request = input(address(i), a.stickyId); // the cookie names an ejected target
        assert.ok([b, c].includes(pool.pick(request)!), 'a first attempt goes to a target in rotation');
        assert.equal(pool.pick(request, [b]), c, 'a retry to the other target in rotation');
        assert.ok([a, d].includes(pool.pick(request, [b, c])!), 'then to one out of rotation: the pool never fails closed');
        assert.equal(pool.pick(request, [c, b, a]), d);
        assert.equal(pool.pick(request, [a, b, c, d]), undefined);
      }
    });

    it(`${mode}: still picks a target when none is in rotation, any of them`, () => {
      const pool = poolOf([1, 1, 1], mode, { healthCheck: CHECK });
      for (const target of pool.targets) target.health.checked('status 500', CHECK);
      assert.deepEqual(pool.targets.map((target) => target.health.available), [false, false, false]);
      const seen = new Set<string>();
      for (let i = 0; i < 300; i++) seen.add(nameOf(pool, pool.pick(input(address(i)))));
      assert.deepEqual([...seen].sort(), ['a', 'b', 'c']);
    });
  }

  it('sends every request to a pool’s only target, even one failing its checks', () => {
    const pool = poolOf([1], 'round_robin', { healthCheck: CHECK });
    pool.targets[0]!.health.checked('status 500', CHECK);
    assert.equal(pool.targets[0]!.health.state, 'unhealthy');
    assert.equal(pool.pick(input()), pool.targets[0]);
    assert.equal(pool.pick(input(), [pool.targets[0]!]), undefined);
  });

  it('goes back to a target when it returns to rotation', () => {
    const pool = poolOf([1, 1], 'round_robin', { healthCheck: CHECK });
    for (const target of pool.targets) target.health.checked(null, CHECK);
    pool.targets[0]!.health.checked('status 500', CHECK);
    assert.equal(picks(pool, 10), 'b'.repeat(10));
    pool.targets[0]!.health.checked(null, CHECK);
    assert.deepEqual(tally(picks(pool, 10), 2), [5, 5]);
  });
});
