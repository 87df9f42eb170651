import type { Balancer } from './balancer.js';
import type { RouteTarget } from '../route-target.js';

/**
 * Smooth weighted round robin, nginx's (ngx_http_upstream_round_robin.c): every choice adds each
 * eligible target's weight to its running score, takes the highest, and takes the eligible total
 * off the winner's. Weights 5, 1, 1 give a a b a c a a rather than a a a a a b c, and a target left
 * out (down, or already tried) simply takes no part until it is back.
 */
export class SmoothRoundRobin implements Balancer {
  /** Running scores, by the targets' positions in the pool. */
  readonly #scores: Float64Array;

  constructor(size: number) {
    this.#scores = new Float64Array(size);
  }

  choose(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean): RouteTarget {
    const scores = this.#scores;
    let total = 0;
    let best = -1;
    for (let i = 0; i < targets.length; i++) {
      const target = targets[i]!;
      if (!eligible(target)) continue;
      scores[i]! += target.weight;
      total += target.weight;
      if (best === -1 || scores[i]! > scores[best]!) best = i;
    }
    scores[best]! -= total;
    return targets[best]!;
  }
}
