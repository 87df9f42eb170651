import { GatewayError } from '../../shared/errors.js';
import { validationError } from '../http/json-body-validation.js';
import { changedFields, type ServiceChanges } from './service-changes.js';
import { parseServiceEntry, type ServiceEntryInput } from './service-validation.js';
import type { StoredService } from './stored-service.js';

/**
 * The declarative registry (design.md §4.9): the whole registry as one versioned document, and the
 * plan that brings the registry to what a document declares. Pure functions; the registry
 * (service-registry.ts) reads and writes SQLite around them.
 */

/** The document format this gateway writes and reads: `"version": 1`. */
export const DOCUMENT_VERSION = 1;

/**
 * A service as a document lists it: its `id` (informative: documents are matched by path) and every
 * writable field, the pool's among them (a document from before pools, with only `targetUrl`,
 * still applies: that one target).
 */
export type DocumentEntry = Omit<StoredService, 'createdAt' | 'updatedAt'>;

/** `GET /api/services/export`'s answer and `POST /api/services/apply`'s body. */
export interface RegistryDocument {
  version: typeof DOCUMENT_VERSION;
  services: DocumentEntry[];
}

/** A service as a valid document declares it: every writable field, defaults filled in. */
export type DeclaredService = ServiceEntryInput;

/**
 * What applying a document does (design.md §4.9), each list ordered by path. `update` names the
 * service by its name and path after the change, as `SERVICE_UPDATED` does; `changes` are only
 * the fields that change. A `create` item gets the new service's `id` once applied.
 */
export interface RegistryPlan {
  create: { path: string; id?: string; service: DeclaredService }[];
  update: { path: string; id: string; name: string; changes: ServiceChanges }[];
  delete: { path: string; id: string; name: string }[];
  unchanged: string[];
}

/** The registry's services (ordered by path) as a document. */
export function toDocument(services: readonly StoredService[]): RegistryDocument {
  return {
    version: DOCUMENT_VERSION,
    services: services.map((s) => ({
      id: s.id,
      name: s.name,
      path: s.path,
      targetUrl: s.targetUrl,
      targets: s.targets,
      requireAuth: s.requireAuth,
      description: s.description,
      enabled: s.enabled,
      access: s.access,
      forwardAuthorization: s.forwardAuthorization,
      loadBalancing: s.loadBalancing,
      healthCheck: s.healthCheck,
      outlierDetection: s.outlierDetection,
      retries: s.retries,
    })),
  };
}

/**
 * Validates a document: an object of exactly `version` (1) and `services` (a list), each service
 * by the create body's rules plus `enabled` (service-validation.ts), no two with the same path in
 * any case (the registry's paths are unique so: design.md §5).
 * @throws {GatewayError} BAD_REQUEST (400) `Invalid registry document: …` with `fields` naming
 *   every problem at once: `version`, `services`, unknown top-level fields, and each entry's as
 *   `services[<index>].<field>` (`services[2].path`, `services[0].access.emails`), or
 *   `services[<index>]` for an entry that is no object. `Body must be a JSON object` for a body
 *   that is none.
 */
export function parseRegistryDocument(body: unknown): DeclaredService[] {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new GatewayError('BAD_REQUEST', { message: 'Body must be a JSON object' });
  }
  const { version, services, ...others } = body as Record<string, unknown>;
  const fields: Record<string, string> = {};
  if (version === undefined) fields.version = 'is required';
  else if (version !== DOCUMENT_VERSION) fields.version = `must be ${DOCUMENT_VERSION}`;
  if (services === undefined) fields.services = 'is required';
  else if (!Array.isArray(services)) fields.services = 'must be a list of services';
  const declared = Array.isArray(services) ? services.map((entry, index) => parseEntry(entry, `services[${index}]`, fields)) : [];
  const firstWithPath = new Map<string, number>();
  declared.forEach((service, index) => {
    if (service === undefined) return;
    const key = service.path.toLowerCase();
    const first = firstWithPath.get(key);
    if (first === undefined) firstWithPath.set(key, index);
    else fields[`services[${index}].path`] = `is services[${first}]'s path too (paths are unique ignoring case)`;
  });
  const unknown = Object.keys(others);
  if (Object.keys(fields).length > 0 || unknown.length > 0) throw validationError('Invalid registry document', fields, unknown);
  return declared as DeclaredService[];
}

/** One entry, or undefined with its reasons added to `fields` under `at` (`services[2]`). */
function parseEntry(entry: unknown, at: string, fields: Record<string, string>): DeclaredService | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fields[at] = 'must be an object';
    return undefined;
  }
  try {
    return parseServiceEntry(entry);
  } catch (error) {
    if (!(error instanceof GatewayError) || !error.fields) throw error;
    for (const [field, reason] of Object.entries(error.fields)) fields[`${at}.${field}`] = reason;
    return undefined;
  }
}

/**
 * The plan from `current` (the registry, ordered by path) to `declared` (a valid document's
 * services). Each declared service is matched to the registered one with its path, compared as
 * the registry compares paths, ignoring case; when a legacy registry holds several paths that
 * differ only in case, the one spelled exactly as declared is matched, else the first, and the
 * others are deleted. Matched: `update` with the fields that differ (a changed spelling of the
 * path among them), or `unchanged`. Declared and unmatched: `create`. Registered and unmatched:
 * `delete`. Costs one map lookup per service.
 */
export function planRegistry(current: readonly StoredService[], declared: readonly DeclaredService[]): RegistryPlan {
  const byKey = new Map<string, StoredService[]>();
  for (const service of current) {
    const key = service.path.toLowerCase();
    byKey.set(key, [...(byKey.get(key) ?? []), service]);
  }
  const plan: RegistryPlan = { create: [], update: [], delete: [], unchanged: [] };
  const matched = new Set<string>();
  for (const service of declared) {
    const candidates = byKey.get(service.path.toLowerCase()) ?? [];
    const match = candidates.find((candidate) => candidate.path === service.path) ?? candidates[0];
    if (!match) {
      plan.create.push({ path: service.path, service });
      continue;
    }
    matched.add(match.id);
    const changes = changedFields(match, service);
    if (Object.keys(changes).length === 0) plan.unchanged.push(service.path);
    else plan.update.push({ path: service.path, id: match.id, name: service.name, changes });
  }
  for (const service of current) {
    if (!matched.has(service.id)) plan.delete.push({ path: service.path, id: service.id, name: service.name });
  }
  plan.create.sort(byPath);
  plan.update.sort(byPath);
  plan.delete.sort(byPath);
  plan.unchanged.sort((a, b) => byPath({ path: a }, { path: b }));
  return plan;
}

/** Orders by path as the registry lists services (SQLite's binary collation; valid paths are ASCII). */
const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
