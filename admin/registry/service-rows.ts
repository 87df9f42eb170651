import { poolSettingsOf } from '../../shared/services/target-pool-settings.js';
import type { AccessPolicy, CorsPreflight, HealthCheck, LoadBalancing, OutlierDetection, ServiceRule, ServiceTarget } from '../../shared/types.js';
import type { StoredService } from './stored-service.js';

/**
 * A `services` row: snake_case columns, booleans as 0/1, timestamps as ISO text, the access policy
 * and the health check as JSON text or NULL, the targets, outlier detection and rules as JSON text,
 * step-up's `max_age` and `acr` (JSON text) NULL for none.
 */
export interface ServiceRow {
  id: string;
  name: string;
  path: string;
  target_url: string;
  require_auth: number;
  description: string;
  enabled: number;
  created_at: string;
  updated_at: string;
  access: string | null;
  forward_authorization: number;
  /** NULL in a row from before pools (migrations.ts): the one target `target_url`. */
  targets: string | null;
  load_balancing: string;
  health_check: string | null;
  outlier_detection: string;
  retries: number;
  /** 1 when created, one more on every change (design.md §4.9). */
  version: number;
  /** JSON text: the host names, `[]` for none (normal forms: shared/services/host-names.ts); a service has none as no `hosts` field. */
  hosts: string;
  /** JSON text: the rules (design.md §4.18), `[]` for none. */
  rules: string;
  /** `auth` or `public`. */
  cors_preflight: string;
  /** Step-up (design.md §4.18): seconds, or NULL for none. */
  max_age: number | null;
  /** Step-up: JSON text of the accepted `acr` values, or NULL for none. */
  acr: string | null;
}

/** Named parameters of the insert and update statements. */
export type ServiceParams = Omit<StoredService, 'hosts' | 'requireAuth' | 'enabled' | 'access' | 'forwardAuthorization' | 'targets' | 'healthCheck' | 'outlierDetection' | 'rules' | 'acr'> & {
  hosts: string;
  requireAuth: number;
  enabled: number;
  access: string | null;
  forwardAuthorization: number;
  targets: string;
  healthCheck: string | null;
  outlierDetection: string;
  rules: string;
  acr: string | null;
};

/** A row as a service; a row from before pools has the one target `target_url` (shared/services/target-pool-settings.ts). */
export function fromRow(row: ServiceRow): StoredService {
  const service = {
    id: row.id,
    name: row.name,
    path: row.path,
    ...hostsOf(row),
    targetUrl: row.target_url,
    requireAuth: row.require_auth === 1,
    description: row.description,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    access: row.access === null ? null : (JSON.parse(row.access) as AccessPolicy),
    forwardAuthorization: row.forward_authorization === 1,
  };
  const pool = poolSettingsOf({
    ...service,
    targets: row.targets === null ? undefined : (JSON.parse(row.targets) as ServiceTarget[]),
    loadBalancing: row.load_balancing as LoadBalancing,
    healthCheck: row.health_check === null ? null : (JSON.parse(row.health_check) as HealthCheck),
    outlierDetection: JSON.parse(row.outlier_detection) as OutlierDetection,
    retries: row.retries,
  });
  const stepUp = { maxAge: row.max_age, acr: row.acr === null ? null : (JSON.parse(row.acr) as string[]) };
  return { ...service, ...pool, rules: JSON.parse(row.rules) as ServiceRule[], corsPreflight: row.cors_preflight as CorsPreflight, ...stepUp };
}

/** A row's `hosts`, as a service carries them: none, no field. */
function hostsOf(row: ServiceRow): { hosts?: string[] } {
  const hosts = JSON.parse(row.hosts) as string[];
  return hosts.length > 0 ? { hosts } : {};
}

/** A service as the named parameters of the insert and update statements. */
export function toParams(service: StoredService): ServiceParams {
  return {
    ...service,
    hosts: JSON.stringify(service.hosts ?? []),
    requireAuth: service.requireAuth ? 1 : 0,
    enabled: service.enabled ? 1 : 0,
    access: service.access === null ? null : JSON.stringify(service.access),
    forwardAuthorization: service.forwardAuthorization ? 1 : 0,
    targets: JSON.stringify(service.targets),
    healthCheck: service.healthCheck === null ? null : JSON.stringify(service.healthCheck),
    outlierDetection: JSON.stringify(service.outlierDetection),
    rules: JSON.stringify(service.rules),
    acr: service.acr === null ? null : JSON.stringify(service.acr),
  };
}
