import { GatewayError } from '../../shared/errors.js';
import { validationError } from '../http/json-body-validation.js';
import { reservedHostProblem } from './reserved-hosts.js';
import { routeKeys } from './route-uniqueness.js';
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
 * A service as a document lists it: its `id` (informative: documents are matched by path and
 * hosts) and every writable field, the pool's among them (a document from before pools, with only
 * `targetUrl`, still applies: that one target). `hosts` only when it has some, so the document of
 * a registry without hosts is what it was before them.
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
      ...(s.hosts ? { hosts: s.hosts } : {}),
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
      rules: s.rules,
      corsPreflight: s.corsPreflight,
      maxAge: s.maxAge,
      acr: s.acr,
    })),
  };
}

/**
 * Validates a document: an object of exactly `version` (1) and `services` (a list), each service
 * by the create body's rules plus `enabled` (service-validation.ts), none naming a `reserved`
 * host (reserved-hosts.ts), no two reached at one place: two host-less ones with the same path in
 * any case, or two naming one host at such a path (the registry's routes are unique so: design.md
 * §5, route-uniqueness.ts).
 * @throws {GatewayError} BAD_REQUEST (400) `Invalid registry document: …` with `fields` naming
 *   every problem at once: `version`, `services`, unknown top-level fields, and each entry's as
 *   `services[<index>].<field>` (`services[2].path`, `services[0].access.emails`), or
 *   `services[<index>]` for an entry that is no object. `Body must be a JSON object` for a body
 *   that is none.
 */
export function parseRegistryDocument(body: unknown, reserved: readonly string[] = []): DeclaredService[] {
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
  declared.forEach((service, index) => {
    const problem = service?.hosts && reservedHostProblem(service.hosts, reserved);
    if (problem) fields[`services[${index}].hosts`] = problem;
  });
  findSharedRoutes(declared, fields);
  const unknown = Object.keys(others);
  if (Object.keys(fields).length > 0 || unknown.length > 0) throw validationError('Invalid registry document', fields, unknown);
  return declared as DeclaredService[];
}

/**
 * Adds to `fields` each entry reached where an earlier one is: `services[<i>].path` for a
 * host-less path, `services[<i>].hosts` naming the host for a pair. One map lookup per route.
 */
function findSharedRoutes(declared: readonly (DeclaredService | undefined)[], fields: Record<string, string>): void {
  const firstAt = new Map<string, number>();
  declared.forEach((service, index) => {
    if (service === undefined) return;
    for (const key of routeKeys(service)) {
      const first = firstAt.get(key);
      if (first === undefined) firstAt.set(key, index);
      else if (!service.hosts) fields[`services[${index}].path`] = `is services[${first}]'s path too (paths are unique ignoring case)`;
      else fields[`services[${index}].hosts`] ??= `names ${key.split(' ')[0]} at services[${first}]'s path too ((host, path) pairs are unique, paths ignoring case)`;
    }
  });
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
 * services). Each declared service is matched to a registered one reached at one of its places
 * (route-uniqueness.ts): the host-less service at its path, compared as the registry compares
 * paths, ignoring case; for a service with hosts, one at its path that names one of its hosts
 * (a service whose hosts all change is deleted and made again: PUT keeps its id). Among several
 * (a legacy registry holding paths that differ only in case; services whose hosts the document
 * joins), the first not yet matched with the path spelled exactly as declared, else the first
 * not yet matched; the others are deleted. Matched: `update` with the fields that differ (a
 * changed spelling of the path among them), or `unchanged`. Declared and unmatched: `create`.
 * Registered and unmatched: `delete`. Costs one map lookup per route.
 */
export function planRegistry(current: readonly StoredService[], declared: readonly DeclaredService[]): RegistryPlan {
  const byKey = new Map<string, StoredService[]>();
  for (const service of current) {
    for (const key of routeKeys(service)) byKey.set(key, [...(byKey.get(key) ?? []), service]);
  }
  const plan: RegistryPlan = { create: [], update: [], delete: [], unchanged: [] };
  const matched = new Set<string>();
  for (const service of declared) {
    const candidates = routeKeys(service).flatMap((key) => byKey.get(key) ?? []).filter((candidate) => !matched.has(candidate.id));
    const match = candidates.find((candidate) => candidate.path === service.path) ?? candidates[0];
    if (!match) {
      plan.create.push({ path: service.path, service });
      continue;
    }
    matched.add(match.id);
    // A match shares a place with the entry: both have hosts, or neither has.
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
