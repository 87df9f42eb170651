import type { LoadBalancing } from '../../shared/types.js';
import type { Balancer, BalancingInput } from './balancing/balancer.js';
import { ClientIpHash } from './balancing/client-ip-hash.js';
import { LeastRequests } from './balancing/least-requests.js';
import { SmoothRoundRobin } from './balancing/smooth-round-robin.js';
import { StickyCookie } from './balancing/sticky-cookie-balancer.js';
import type { RouteTarget } from './route-target.js';

/**
 * A service's targets and how a request picks one (its `loadBalancing`). The pick takes the
 * targets that are available (target-health.ts) and not yet tried by the request; when none is
 * available, any untried one (a pool never fails closed on its own judgement: when every target
 * is ejected or failing its checks, each is still tried before the client gets a 503).
 */
export class TargetPool {
  readonly targets: readonly RouteTarget[];
  /** Most retries after a request reached a target (the service's `retries`). */
  readonly retries: number;
  /** Whether the pool balances by sticky cookie (`loadBalancing: cookie`). */
  readonly sticky: boolean;
  readonly #balancer: Balancer;

  constructor(targets: readonly RouteTarget[], loadBalancing: LoadBalancing, retries: number) {
    this.targets = targets;
    this.retries = retries;
    this.sticky = loadBalancing === 'cookie';
    this.#balancer = balancerFor(loadBalancing, targets.length);
  }

  /**
   * The target for a request, `tried` the targets it has already been sent to (none, mostly);
   * undefined once every target has been tried.
   */
  pick(input: BalancingInput, tried?: readonly RouteTarget[]): RouteTarget | undefined {
    const targets = this.targets;
    if (tried === undefined) {
      if (targets.length === 1) return targets[0];
      return this.#balancer.choose(targets, anyAvailable(targets) ? isAvailable : isAny, input);
    }
    const untried = (target: RouteTarget): boolean => !tried.includes(target);
    if (!targets.some(untried)) return undefined;
    const availableUntried = (target: RouteTarget): boolean => target.health.available && untried(target);
    return this.#balancer.choose(targets, targets.some(availableUntried) ? availableUntried : untried, input);
  }

  /** Whether `target` may be ejected: some other target of the pool is available. */
  mayEject(target: RouteTarget): boolean {
    return this.targets.some((other) => other !== target && other.health.available);
  }
}

const isAvailable = (target: RouteTarget): boolean => target.health.available;
const isAny = (): boolean => true;

function anyAvailable(targets: readonly RouteTarget[]): boolean {
  for (const target of targets) if (target.health.available) return true;
  return false;
}

function balancerFor(loadBalancing: LoadBalancing, size: number): Balancer {
  switch (loadBalancing) {
    case 'least_requests':
      return new LeastRequests();
    case 'client_ip':
      return new ClientIpHash();
    case 'cookie':
      return new StickyCookie(size);
    default:
      return new SmoothRoundRobin(size);
  }
}
