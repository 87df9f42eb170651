import type { Balancer } from './balancer.js';
import type { RouteTarget } from '../route-target.js';

/**
 * Least requests by the power of two choices (Mitzenmacher; Envoy's LEAST_REQUEST): two eligible
 * targets at random, the one with fewer requests in flight per unit of weight wins. Unlike
 * "the least busy of all" it does not send a burst to the one target that just finished, and a
 * slow target, whose requests pile up, is chosen less and less.
 */
export class LeastRequests implements Balancer {
  choose(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean): RouteTarget {
    let count = 0;
    for (const target of targets) if (eligible(target)) count++;
    const first = Math.floor(Math.random() * count);
    if (count === 1) return nth(targets, eligible, first);
    const second = (first + 1 + Math.floor(Math.random() * (count - 1))) % count;
    const a = nth(targets, eligible, first);
    const b = nth(targets, eligible, second);
    return b.health.active * a.weight < a.health.active * b.weight ? b : a;
  }
}

/** The `n`-th eligible target (from 0). */
function nth(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean, n: number): RouteTarget {
  for (const target of targets) {
    if (eligible(target) && n-- === 0) return target;
  }
  throw new Error('no eligible target');
}
