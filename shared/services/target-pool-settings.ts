import type { HealthCheck, LoadBalancing, OutlierDetection, Service, ServiceTarget } from '../types.js';

/** Default outlier detection: 3 failures within 10 s eject a target for 30 s. */
export const DEFAULT_OUTLIER_DETECTION: Readonly<OutlierDetection> = Object.freeze({ maxFails: 3, windowSeconds: 10, ejectSeconds: 30 });
/** Default retries on another target once a request reached one. */
export const DEFAULT_RETRIES = 1;
/** Default balancing. */
export const DEFAULT_LOAD_BALANCING: LoadBalancing = 'round_robin';
/** Default weight of a target. */
export const DEFAULT_WEIGHT = 1;

/** A service's pool settings with every default filled in. */
export interface PoolSettings {
  targets: ServiceTarget[];
  loadBalancing: LoadBalancing;
  healthCheck: HealthCheck | null;
  outlierDetection: OutlierDetection;
  retries: number;
}

/**
 * The pool settings of `service`, defaults filled in: a service from before pools (no `targets`)
 * has the one target `targetUrl` with weight 1.
 */
export function poolSettingsOf(service: Service): PoolSettings {
  return {
    targets: service.targets && service.targets.length > 0 ? service.targets : [{ url: service.targetUrl, weight: DEFAULT_WEIGHT }],
    loadBalancing: service.loadBalancing ?? DEFAULT_LOAD_BALANCING,
    healthCheck: service.healthCheck ?? null,
    outlierDetection: service.outlierDetection ?? DEFAULT_OUTLIER_DETECTION,
    retries: service.retries ?? DEFAULT_RETRIES,
  };
}

/** The values a `healthCheck` object's absent fields take. */
export const DEFAULT_HEALTH_CHECK: Readonly<HealthCheck> = Object.freeze({
  path: '/',
  intervalSeconds: 10,
  timeoutMs: 2000,
  healthyThreshold: 2,
  unhealthyThreshold: 3,
  expectStatus: '2xx',
});
