/**
 * The pool's fields (design.md §4.13) as every service answer carries them when none was given: the one
 * target `targetUrl` with weight 1 and the documented defaults, written out here rather than taken
 * from the code under test; with them the rules' defaults (design.md §4.18: none, preflights as any
 * request) and step-up's (none: null). Not a test file itself.
 */
import type { Service } from '../../shared/types.js';

export function defaultPool(targetUrl: string) {
  return {
    targets: [{ url: targetUrl, weight: 1 }],
    loadBalancing: 'round_robin',
    healthCheck: null,
    outlierDetection: { maxFails: 3, windowSeconds: 10, ejectSeconds: 30 },
    retries: 1,
    rules: [],
    corsPreflight: 'auth',
    maxAge: null,
    acr: null,
  };
}

/** A health check with every field at its documented default. */
export const DEFAULT_HEALTH_CHECK = { path: '/', intervalSeconds: 10, timeoutMs: 2000, healthyThreshold: 2, unhealthyThreshold: 3, expectStatus: '2xx' };

/**
 * `service`'s entry in an exported registry document (design.md §4.9) for a service created with
 * targetUrl only: its id and every writable field, the pool's at their defaults, no timestamps.
 */
export function documentEntry(service: Service) {
  return {
    id: service.id,
    name: service.name,
    path: service.path,
    targetUrl: service.targetUrl,
    requireAuth: service.requireAuth,
    description: service.description,
    enabled: service.enabled,
    access: service.access,
    forwardAuthorization: service.forwardAuthorization,
    ...defaultPool(service.targetUrl),
  };
}
