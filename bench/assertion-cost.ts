/**
 * What the identity assertion (design.md §4.7) costs the data plane, measured in the bench
 * process before any load, with the data plane's own `IdentityAssertions` and a key from the
 * admin plane's key code, on the same route and caller shape as the protected target:
 * - a cached assertion: what every request of a caller and service pays once one was signed in
 *   the last ASSERTION_TTL minus a minute (every request of the protected target but its first);
 * - a new one: one ES256 signature (node:crypto), paid once per caller and service and period,
 *   and by every request when ASSERTION_TTL is a minute or less.
 * The throughput rows of the protected route include the cached cost; the signing cost does not
 * show there (one session), so it is measured here.
 */
import { newSigningKey, publicHalf } from '../admin/credentials/assertion-keys.js';
import { IdentityAssertions } from '../proxy/auth/identity-assertion.js';
import { RouteTable, type Route } from '../proxy/routing/route-table.js';
import type { SessionUser } from '../shared/types.js';

/** Calls measured for the cached case, and signatures for the new one. */
const CACHED_CALLS = 200_000;
const SIGNATURES = 2_000;

/** Both in µs of the event loop (signing is synchronous). */
export interface AssertionCost {
  /** Per request with a cached assertion. */
  cachedMicros: number;
  /** Per new assertion. */
  signMicros: number;
}

/** Measures both cases, a few hundred ms in all. */
export async function measureAssertionCost(): Promise<AssertionCost> {
  const signing = await newSigningKey();
  const assertions = new IdentityAssertions(new URL('http://127.0.0.1:8080'), 300_000);
  assertions.useKeys({ signing, published: [publicHalf(signing)] });
  const route = new RouteTable([
    { id: 'bench', name: 'Protected', path: '/protected', targetUrl: 'http://127.0.0.1:1', requireAuth: true, description: '', enabled: true, createdAt: '', updatedAt: '' },
  ]).lookup('/protected') as Route;
  const user = (n: number): SessionUser => ({ sub: `bench-user-${n}`, name: 'Bench User', email: 'bench@example.com', isAdmin: false, groups: ['staff'] });

  // Warm-up, both paths, then the first caller's assertion is cached.
  for (let n = 0; n < 200; n++) assertions.assertionFor(user(n), route);
  const cachedUser = user(0);
  let started = performance.now();
  for (let n = 0; n < CACHED_CALLS; n++) assertions.assertionFor(cachedUser, route);
  const cachedMicros = ((performance.now() - started) * 1000) / CACHED_CALLS;

  started = performance.now();
  for (let n = 0; n < SIGNATURES; n++) assertions.assertionFor(user(1_000 + n), route);
  const signMicros = ((performance.now() - started) * 1000) / SIGNATURES;
  return { cachedMicros: round2(cachedMicros), signMicros: round2(signMicros) };
}

function round2(value: number): number {
  return Math.round(value * 100) / 100;
}
