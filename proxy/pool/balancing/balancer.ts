import type { RouteTarget } from '../route-target.js';

/** What a balancer may base its choice on. */
export interface BalancingInput {
  /** The client's address as resolved through TRUST_PROXY (the access log's `ipAddress`). */
  readonly clientIp: string;
  /** The sticky cookie's target id, when the request carried one (cookie balancing). */
  readonly stickyId: string | undefined;
}

/**
 * One way of choosing a target (a service's `loadBalancing`). `eligible` says which of `targets`
 * may be chosen (at least one may); a balancer never allocates per request.
 */
export interface Balancer {
  choose(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean, input: BalancingInput): RouteTarget;
}
