import type { Balancer, BalancingInput } from './balancer.js';
import type { RouteTarget } from '../route-target.js';

/**
 * Consistent hashing of the client address by weighted rendezvous hashing (Thaler and Ravishankar;
 * weights as Schindelhauer and Schomaker give them): every eligible target scores
 * `-weight / ln(u)`, `u` a uniform hash of (address, target) in (0, 1), and the highest wins. A
 * client keeps its target as long as that target is eligible, and a target's loss moves only its
 * own clients, spread over the others by weight; no ring to rebuild. Cost: one hash per target.
 */
export class ClientIpHash implements Balancer {
  choose(targets: readonly RouteTarget[], eligible: (target: RouteTarget) => boolean, input: BalancingInput): RouteTarget {
    const address = fnv1a(input.clientIp, 0x811c9dc5);
    let best: RouteTarget | undefined;
    let bestScore = -Infinity;
    for (const target of targets) {
      if (!eligible(target)) continue;
      const u = (mix(address ^ target.hashSeed) + 0.5) / 4294967296;
      const score = -target.weight / Math.log(u);
      if (score > bestScore) {
        bestScore = score;
        best = target;
      }
    }
    return best!;
  }
}

/** 32-bit FNV-1a of `text`'s UTF-16 code units from `seed`: a target's seed from its url, an address's hash. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** MurmurHash3's 32-bit finaliser: spreads the bits of a combined hash evenly, as unsigned. */
function mix(value: number): number {
  let h = value;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
