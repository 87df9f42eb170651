import type { Balancer, BalancingInput } from './balancer.js';
import type { RouteTarget } from '../route-target.js';
import { SmoothRoundRobin } from './smooth-round-robin.js';

/**
 * Sticky sessions by cookie: a request whose sticky cookie names an eligible target goes there;
 * any other is balanced by {@link SmoothRoundRobin}, and the forwarder then sets the cookie for the
 * target chosen (sticky-target.ts). A target that is down loses its clients to the others,
 * each of which is given a new cookie; they do not come back when it does.
 */
export class StickyCookie implements Balancer {
  readonly #fallback: SmoothRoundRobin;

  constructor(size: number) {
    this.#fallback = new SmoothRoundRobin(size);
  }

  choose(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean, input: BalancingInput): RouteTarget {
    if (input.stickyId !== undefined) {
      for (const target of targets) if (target.stickyId === input.stickyId && eligible(target)) return target;
    }
    return this.#fallback.choose(targets, eligible);
  }
}
