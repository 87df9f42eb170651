import type { PoolSettings } from '../../shared/services/target-pool-settings.js';
import type { AccessPolicy, CorsPreflight, Service, ServiceRule } from '../../shared/types.js';

/**
 * A service as the registry keeps and returns it (service-registry.ts) and as a registry document
 * lists it (registry-document.ts): `access`, `forwardAuthorization`, the pool's settings, `rules`,
 * `corsPreflight`, `maxAge` and `acr` always present; `hosts` only when it has some ({@link withoutEmptyHosts}).
 */
export type StoredService = Service & { access: AccessPolicy | null; forwardAuthorization: boolean; rules: ServiceRule[]; corsPreflight: CorsPreflight; maxAge: number | null; acr: string[] | null } & PoolSettings;

/**
 * `value` without `hosts` when that is empty: a service without hosts has no `hosts` field
 * anywhere (the API, the registry published to the data plane, the audit log, the document), so
 * they all read for such a service as they did before hosts (design.md §5).
 */
export function withoutEmptyHosts<T extends { hosts?: readonly string[] | undefined }>(value: T): T {
  if (value.hosts === undefined || value.hosts.length > 0) return value;
  const { hosts: _none, ...rest } = value;
  return rest as T;
}
