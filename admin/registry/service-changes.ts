import { isDeepStrictEqual } from 'node:util';
import type { Service } from '../../shared/types.js';
import type { ServicePatch } from './service-validation.js';

/**
 * Before and after of each changed field: the details of `SERVICE_UPDATED` (design.md §5) and the
 * changes of an update in a registry plan (design.md §4.9).
 */
export type ServiceChanges = Partial<Record<keyof ServicePatch, { before: unknown; after: unknown }>>;

/**
 * The fields of `patch` whose value differs from `service`, each with its before and after. Values
 * are compared by content: an access policy or a pool of targets given again as it is stored is no
 * change; a service without `hosts` has `[]` of them (its before, when they change). A patch has `targetUrl` and `targets` together (service-validation.ts), so a new
 * `targetUrl` shows the pool it replaces too.
 */
export function changedFields(service: Service, patch: ServicePatch): ServiceChanges {
  const changes: ServiceChanges = {};
  for (const [field, after] of Object.entries(patch) as [keyof ServicePatch, unknown][]) {
    const before = field === 'hosts' ? (service.hosts ?? []) : service[field];
    if (after !== undefined && !isDeepStrictEqual(after, before)) changes[field] = { before, after };
  }
  return changes;
}

/** The values `changes` leads to, as a patch (`{ field: after }`). */
export function afterChanges(changes: ServiceChanges): ServicePatch {
  return Object.fromEntries(Object.entries(changes).map(([field, change]) => [field, change.after])) as ServicePatch;
}
