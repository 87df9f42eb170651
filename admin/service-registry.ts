import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Database, Statement } from 'better-sqlite3';
import { GatewayError } from '../shared/errors.js';
import type { EventBus } from '../shared/backends/event-bus.js';
import type { AccessPolicy, Service } from '../shared/types.js';
import type { Actor, AuditLog } from './audit-log.js';
import { assertPolicyNeedsSignIn, parseServiceCreate, parseServiceUpdate, parseToggle, type ServicePatch } from './service-validation.js';

/** A `services` row: snake_case columns, booleans as 0/1, timestamps as ISO text, the access policy as JSON text or NULL. */
interface ServiceRow {
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
}

/** Named parameters of the insert and update statements. */
type ServiceParams = Omit<Service, 'requireAuth' | 'enabled' | 'access' | 'forwardAuthorization'> & {
  requireAuth: number;
  enabled: number;
  access: string | null;
  forwardAuthorization: number;
};

/** A service as the registry keeps and returns it: `access` and `forwardAuthorization` always present. */
type StoredService = Service & { access: AccessPolicy | null; forwardAuthorization: boolean };

/** Before and after of each changed field, the details of `SERVICE_UPDATED` (design.md §5). */
export type ServiceChanges = Partial<Record<keyof ServicePatch, { before: unknown; after: unknown }>>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `text` has the form of a service id (a UUID). */
export const isServiceId = (text: string): boolean => UUID.test(text);

/**
 * The service registry (interface.md §2.1, §3): the `services` table, its audit trail and the snapshot the
 * data plane routes by. Each write validates its body, then changes the row and records its audit
 * entry in one SQLite transaction, then publishes the whole registry on the event bus.
 */
export class ServiceRegistry {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #bus: Pick<EventBus, 'publishRegistry'>;
  readonly #all: Statement<[], ServiceRow>;
  readonly #byId: Statement<[string], ServiceRow>;
  readonly #pathTaken: Statement<[string, string], { id: string }>;
  readonly #insert: Statement<[ServiceParams]>;
  readonly #update: Statement<[ServiceParams]>;
  readonly #delete: Statement<[string]>;
  readonly #counts: Statement<[], { total: number; enabled: number }>;
  #publishing: Promise<void> = Promise.resolve();

  constructor(db: Database, audit: AuditLog, bus: Pick<EventBus, 'publishRegistry'>) {
    this.#db = db;
    this.#audit = audit;
    this.#bus = bus;
    this.#all = db.prepare('SELECT * FROM services ORDER BY path');
    this.#byId = db.prepare('SELECT * FROM services WHERE id = ?');
    // lower() folds ASCII only, which is all a valid path holds. No unique index on lower(path):
    // a legacy database may already hold paths that differ only in case (the route table then
    // keeps the protected one), and such an index could not be created over them.
    this.#pathTaken = db.prepare('SELECT id FROM services WHERE lower(path) = lower(?) AND id != ? LIMIT 1');
    this.#insert = db.prepare(
      `INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, access, forward_authorization)
       VALUES (@id, @name, @path, @targetUrl, @requireAuth, @description, @enabled, @createdAt, @updatedAt, @access, @forwardAuthorization)`,
    );
    this.#update = db.prepare(
      `UPDATE services SET name = @name, path = @path, target_url = @targetUrl, require_auth = @requireAuth,
         description = @description, enabled = @enabled, updated_at = @updatedAt, access = @access,
         forward_authorization = @forwardAuthorization WHERE id = @id`,
    );
    this.#delete = db.prepare('DELETE FROM services WHERE id = ?');
    this.#counts = db.prepare('SELECT count(*) AS total, coalesce(sum(enabled), 0) AS enabled FROM services');
  }

  /** Every service, enabled or not, ordered by path. */
  list(): StoredService[] {
    return this.#all.all().map(fromRow);
  }

  /**
   * The service with this id.
   * @throws {GatewayError} SERVICE_NOT_FOUND (404) when there is none, including for ids that are not UUIDs.
   */
  get(id: string): StoredService {
    const row = isServiceId(id) ? this.#byId.get(id) : undefined;
    if (!row) throw new GatewayError('SERVICE_NOT_FOUND');
    return fromRow(row);
  }

  /**
   * Creates a service from a POST body (interface.md §4.2): new UUID, `enabled` true, both timestamps now.
   * Audited as `SERVICE_CREATED` with details `{ service }`.
   * @throws {GatewayError} 400 from {@link parseServiceCreate}; PATH_IN_USE (409) for a path taken in any case.
   */
  async create(body: unknown, actor: Actor): Promise<StoredService> {
    const input = parseServiceCreate(body);
    const now = new Date().toISOString();
    const service: StoredService = { id: randomUUID(), ...input, enabled: true, createdAt: now, updatedAt: now };
    this.#write(() => {
      this.#assertPathFree(service.path, service.id);
      this.#insert.run(toParams(service));
      this.#audit.record({ ...actor, action: 'SERVICE_CREATED', serviceId: service.id, details: { service } });
    });
    await this.publish();
    return service;
  }

  /**
   * Applies a PUT body (any subset of the writable fields, interface.md §4.2). Audited as `SERVICE_UPDATED`
   * with details `{ name, path, changes: { <field>: { before, after } } }` (the name and path after
   * the change, so the audit names the service as it then was; changed fields only). A body that
   * changes nothing returns the service as it is: no audit entry, `updatedAt` kept.
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); 400 from {@link parseServiceUpdate}, or with
   *   `fields.access` when the service would keep a policy without `requireAuth`; PATH_IN_USE (409).
   */
  async update(id: string, body: unknown, actor: Actor): Promise<StoredService> {
    this.get(id);
    const patch = parseServiceUpdate(body);
    const result = this.#write(() => {
      const before = this.get(id);
      const changes = diff(before, patch);
      if (Object.keys(changes).length === 0) return { service: before, changed: false };
      const after: StoredService = { ...before, ...patch, updatedAt: new Date().toISOString() };
      assertPolicyNeedsSignIn(after);
      if (changes.path) this.#assertPathFree(after.path, id);
      this.#update.run(toParams(after));
      this.#audit.record({ ...actor, action: 'SERVICE_UPDATED', serviceId: id, details: { name: after.name, path: after.path, changes } });
      return { service: after, changed: true };
    });
    if (result.changed) await this.publish();
    return result.service;
  }

  /**
   * Deletes a service (interface.md §3). Its access-log records stay. Audited as `SERVICE_DELETED` with
   * details `{ service }`, the service as it was.
   * @throws {GatewayError} SERVICE_NOT_FOUND (404).
   */
  async remove(id: string, actor: Actor): Promise<void> {
    this.#write(() => {
      const service = this.get(id);
      this.#delete.run(id);
      this.#audit.record({ ...actor, action: 'SERVICE_DELETED', serviceId: id, details: { service } });
    });
    await this.publish();
  }

  /**
   * Applies a toggle body `{ "enabled": <boolean> }` (interface.md §3). Audited as `SERVICE_ENABLED` or
   * `SERVICE_DISABLED` with details `{ name, path }`; setting the current state again is a no-op
   * (no audit entry, `updatedAt` kept).
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); 400 from {@link parseToggle}.
   */
  async setEnabled(id: string, body: unknown, actor: Actor): Promise<StoredService> {
    this.get(id);
    const { enabled } = parseToggle(body);
    const result = this.#write(() => {
      const before = this.get(id);
      if (before.enabled === enabled) return { service: before, changed: false };
      const after: StoredService = { ...before, enabled, updatedAt: new Date().toISOString() };
      this.#update.run(toParams(after));
      const action = enabled ? 'SERVICE_ENABLED' : 'SERVICE_DISABLED';
      this.#audit.record({ ...actor, action, serviceId: id, details: { name: after.name, path: after.path } });
      return { service: after, changed: true };
    });
    if (result.changed) await this.publish();
    return result.service;
  }

  /** How many services there are, and how many of them are enabled or disabled (interface.md §2.5). */
  counts(): { total: number; enabled: number; disabled: number } {
    const { total, enabled } = this.#counts.get()!;
    return { total, enabled, disabled: total - enabled };
  }

  /**
   * Publishes the current registry on the event bus. Publications run one after another and each
   * reads the registry when its turn comes, so the last one out always carries the latest state.
   * @throws whatever the bus throws (the change itself is already committed).
   */
  publish(): Promise<void> {
    const next = this.#publishing.then(() => this.#bus.publishRegistry(this.list()));
    this.#publishing = next.catch(() => undefined);
    return next;
  }

  /** Runs `change` in one transaction; a unique-path violation becomes PATH_IN_USE (409). */
  #write<T>(change: () => T): T {
    try {
      return this.#db.transaction(change)();
    } catch (error) {
      if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new GatewayError('PATH_IN_USE');
      throw error;
    }
  }

  /**
   * Paths are unique case-insensitively (design.md §5), because the data plane routes on a lowercased
   * key: `/App` beside `/app` would be one route. Run inside the write's transaction.
   * @throws {GatewayError} PATH_IN_USE (409) when another service has `path` in any case.
   */
  #assertPathFree(path: string, id: string): void {
    if (this.#pathTaken.get(path, id)) throw new GatewayError('PATH_IN_USE');
  }
}

/**
 * The fields of `patch` whose value differs from `service`, each with its before and after. Values
 * are compared by content: an access policy given again as it is stored is no change.
 */
function diff(service: StoredService, patch: ServicePatch): ServiceChanges {
  const changes: ServiceChanges = {};
  for (const [field, after] of Object.entries(patch) as [keyof ServicePatch, unknown][]) {
    const before = service[field];
    if (after !== undefined && !isDeepStrictEqual(after, before)) changes[field] = { before, after };
  }
  return changes;
}

function fromRow(row: ServiceRow): StoredService {
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    targetUrl: row.target_url,
    requireAuth: row.require_auth === 1,
    description: row.description,
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    access: row.access === null ? null : (JSON.parse(row.access) as AccessPolicy),
    forwardAuthorization: row.forward_authorization === 1,
  };
}

function toParams(service: StoredService): ServiceParams {
  return {
    ...service,
    requireAuth: service.requireAuth ? 1 : 0,
    enabled: service.enabled ? 1 : 0,
    access: service.access === null ? null : JSON.stringify(service.access),
    forwardAuthorization: service.forwardAuthorization ? 1 : 0,
  };
}
