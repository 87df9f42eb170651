import type { PoolSettings } from '../../shared/services/target-pool-settings.js';
import type { AccessPolicy, Service } from '../../shared/types.js';

/**
 * A service as the registry keeps and returns it (service-registry.ts) and as a registry document
 * lists it (registry-document.ts): `access`, `forwardAuthorization` and the pool's settings always present.
 */
export type StoredService = Service & { access: AccessPolicy | null; forwardAuthorization: boolean } & PoolSettings;
