import { randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { GatewayError } from '../../shared/errors.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { Actor, AuditLog } from '../audit-log.js';
import { ifMatchHolds, type IfMatch } from '../http/preconditions.js';
import { parseRegistryDocument, planRegistry, toDocument, type RegistryDocument, type RegistryPlan } from './registry-document.js';
import { afterChanges, changedFields } from './service-changes.js';
import { withoutEmptyHosts, type StoredService } from './stored-service.js';
import { assertPolicyNeedsSignIn } from './access-policy-fields.js';
import { assertStepUpNeedsSignIn } from './step-up-fields.js';
import { assertHostsAllowed } from './reserved-hosts.js';
import { routeInUse, sharedRoute } from './route-uniqueness.js';
import { parseServiceCreate, parseServiceUpdate, parseToggle } from './service-validation.js';
import { fromRow, toParams, type ServiceParams, type ServiceRow } from './service-rows.js';

/** A service and its ETag (design.md §4.9). */
export interface TaggedService {
  service: StoredService;
  /** A strong entity tag (RFC 9110 §8.8.3): the service's version in quotes, `"3"`. */
  etag: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `text` has the form of a service id (a UUID). */
export const isServiceId = (text: string): boolean => UUID.test(text);

/** What the registry is told of its configuration. */
export interface RegistryOptions {
  /** Host names no service may list (reserved-hosts.ts `reservedHosts`); none by default. */
  reservedHosts?: readonly string[];
}

/** The ETag of a service at `version` (design.md §4.9). */
const etagOf = (version: number): string => `"${version}"`;

/**
 * The service registry (interface.md §2.1, §3): the `services` table, its audit trail and the snapshot the
 * data plane routes by. Each write validates its body, then changes the row and records its audit
 * entry in one SQLite transaction, then publishes the whole registry on the event bus. Every change
 * of a row adds one to its version, whose ETag a write of one service may be conditional on
 * (`If-Match`, checked in the write's transaction: design.md §4.9). Where services are reached is
 * unique (route-uniqueness.ts), checked in each write's transaction too: the table has no unique
 * constraint on paths, since one path may be taken on several hosts.
 */
export class ServiceRegistry {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #bus: Pick<EventBus, 'publishRegistry'>;
  readonly #all: Statement<[], ServiceRow>;
  readonly #byId: Statement<[string], ServiceRow>;
  readonly #byHost: Statement<[string], ServiceRow>;
  readonly #samePath: Statement<[string, string], ServiceRow>;
  readonly #insert: Statement<[ServiceParams]>;
  readonly #update: Statement<[ServiceParams]>;
  readonly #delete: Statement<[string]>;
  readonly #versions: Statement<[], { id: string; version: number }>;
  readonly #counts: Statement<[], { total: number; enabled: number }>;
  readonly #reservedHosts: readonly string[];
  #publishing: Promise<void> = Promise.resolve();
  /** What {@link snapshot} returns until the next write; undefined until read again. */
  #snapshot: readonly StoredService[] | undefined;

  constructor(db: Database, audit: AuditLog, bus: Pick<EventBus, 'publishRegistry'>, options: RegistryOptions = {}) {
    this.#db = db;
    this.#reservedHosts = options.reservedHosts ?? [];
    this.#audit = audit;
    this.#bus = bus;
    // Then host-less first, then by hosts: one path may be listed several times, and an export must not reorder them.
    this.#all = db.prepare("SELECT * FROM services ORDER BY path, hosts <> '[]', hosts");
    this.#byId = db.prepare('SELECT * FROM services WHERE id = ?');
    this.#byHost = db.prepare("SELECT * FROM services WHERE EXISTS (SELECT 1 FROM json_each(services.hosts) WHERE value = ?) ORDER BY path, hosts <> '[]', hosts");
    // lower() folds ASCII only, which is all a valid path holds (the index services_by_lower_path).
    // No unique index: one path may be taken on several hosts, and a legacy database may already
    // hold paths that differ only in case (the route table then keeps the protected one).
    this.#samePath = db.prepare('SELECT * FROM services WHERE lower(path) = lower(?) AND id != ?');
    this.#insert = db.prepare(
      `INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, access, forward_authorization,
         targets, load_balancing, health_check, outlier_detection, retries, hosts, rules, cors_preflight, max_age, acr)
       VALUES (@id, @name, @path, @targetUrl, @requireAuth, @description, @enabled, @createdAt, @updatedAt, @access, @forwardAuthorization,
         @targets, @loadBalancing, @healthCheck, @outlierDetection, @retries, @hosts, @rules, @corsPreflight, @maxAge, @acr)`,
    );
    this.#update = db.prepare(
      `UPDATE services SET name = @name, path = @path, target_url = @targetUrl, require_auth = @requireAuth,
         description = @description, enabled = @enabled, updated_at = @updatedAt, access = @access,
         forward_authorization = @forwardAuthorization, targets = @targets, load_balancing = @loadBalancing,
         health_check = @healthCheck, outlier_detection = @outlierDetection, retries = @retries, hosts = @hosts,
         rules = @rules, cors_preflight = @corsPreflight, max_age = @maxAge, acr = @acr,
         version = version + 1 WHERE id = @id`,
    );
    this.#delete = db.prepare('DELETE FROM services WHERE id = ?');
    this.#versions = db.prepare('SELECT id, version FROM services');
    this.#counts = db.prepare('SELECT count(*) AS total, coalesce(sum(enabled), 0) AS enabled FROM services');
  }

  /** Every service, enabled or not, ordered by path, then host-less first, then by hosts (as JSON text). */
  list(): StoredService[] {
    return this.#all.all().map(fromRow);
  }

  /**
   * The services whose `hosts` name `host` as written there (a normal form: shared/services/host-names.ts;
   * `*.apps.example.com` names the wildcard, not the hosts under it), ordered by path.
   */
  listNaming(host: string): StoredService[] {
    return this.#byHost.all(host).map(fromRow);
  }

  /**
   * Every service, as {@link list} returns them, but the same objects from one write to the next
   * (read again after each write, committed or not): a reader may key what it derives from a
   * service on the object, and derive it once per change (the home page's compiled access
   * policies, routes/page-routes.ts). While the admin plane runs, its registry is the table's only
   * writer, so nothing else can make the snapshot stale. Frozen, as every reader shares it.
   */
  snapshot(): readonly StoredService[] {
    this.#snapshot ??= Object.freeze(this.list().map((service) => Object.freeze(service)));
    return this.#snapshot;
  }

  /**
   * The service with this id.
   * @throws {GatewayError} SERVICE_NOT_FOUND (404) when there is none, including for ids that are not UUIDs.
   */
  get(id: string): StoredService {
    return fromRow(this.#row(id));
  }

  /**
   * The service with this id and its ETag (`GET /api/services/:id`, the console's forms).
   * @throws {GatewayError} SERVICE_NOT_FOUND (404), as {@link get}.
   */
  getTagged(id: string): TaggedService {
    const row = this.#row(id);
    return { service: fromRow(row), etag: etagOf(row.version) };
  }

  /** Every service's ETag, by id (the console's buttons send them back as If-Match). */
  etags(): Map<string, string> {
    return new Map(this.#versions.all().map((row) => [row.id, etagOf(row.version)]));
  }

  /** The whole registry as a document (design.md §4.9; `GET /api/services/export`). */
  exportDocument(): RegistryDocument {
    return toDocument(this.list());
  }

  /**
   * Creates a service from a POST body (interface.md §4.2): new UUID, `enabled` true, both timestamps now.
   * Audited as `SERVICE_CREATED` with details `{ service }`.
   * @throws {GatewayError} 400 from {@link parseServiceCreate}, or with `fields.hosts` naming a
   *   reserved host (reserved-hosts.ts); PATH_IN_USE (409) for a place taken ({@link #assertRouteFree}).
   */
  async create(body: unknown, actor: Actor): Promise<StoredService> {
    const input = parseServiceCreate(body);
    const now = new Date().toISOString();
    const service: StoredService = { id: randomUUID(), ...input, enabled: true, createdAt: now, updatedAt: now };
    assertHostsAllowed(service.hosts ?? [], this.#reservedHosts);
    this.#write(() => {
      this.#assertRouteFree(service);
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
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); PRECONDITION_FAILED (412) unless `ifMatch`
   *   holds; 400 from {@link parseServiceUpdate}, or with `fields.access` when the service would
   *   keep a policy without `requireAuth`, or with `fields.hosts` for new hosts naming a reserved
   *   host; PATH_IN_USE (409) when a changed path or hosts take a place taken ({@link #assertRouteFree}).
   */
  async update(id: string, body: unknown, actor: Actor, ifMatch: IfMatch = null): Promise<StoredService> {
    const result = this.#write(() => {
      const before = this.#current(id, ifMatch);
      const patch = parseServiceUpdate(body);
      const changes = changedFields(before, patch);
      if (Object.keys(changes).length === 0) return { service: before, changed: false };
      const after: StoredService = withoutEmptyHosts({ ...before, ...patch, updatedAt: new Date().toISOString() });
      assertPolicyNeedsSignIn(after);
      assertStepUpNeedsSignIn(after);
      if (changes.hosts) assertHostsAllowed(after.hosts ?? [], this.#reservedHosts);
      if (changes.path || changes.hosts) this.#assertRouteFree(after);
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
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); PRECONDITION_FAILED (412) unless `ifMatch` holds.
   */
  async remove(id: string, actor: Actor, ifMatch: IfMatch = null): Promise<void> {
    this.#write(() => {
      const service = this.#current(id, ifMatch);
      this.#delete.run(id);
      this.#audit.record({ ...actor, action: 'SERVICE_DELETED', serviceId: id, details: { service } });
    });
    await this.publish();
  }

  /**
   * Applies a toggle body `{ "enabled": <boolean> }` (interface.md §3). Audited as `SERVICE_ENABLED` or
   * `SERVICE_DISABLED` with details `{ name, path }`; setting the current state again is a no-op
   * (no audit entry, `updatedAt` kept).
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); PRECONDITION_FAILED (412) unless `ifMatch`
   *   holds; 400 from {@link parseToggle}.
   */
  async setEnabled(id: string, body: unknown, actor: Actor, ifMatch: IfMatch = null): Promise<StoredService> {
    const result = this.#write(() => {
      const before = this.#current(id, ifMatch);
      const { enabled } = parseToggle(body);
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

  /**
   * Brings the registry to what a document declares (design.md §4.9; `POST /api/services/apply`):
   * the plan from {@link planRegistry}, and unless `dryRun`, its deletions, updates and creations
   * in one transaction, each audited as the single-service writes are (`SERVICE_DELETED`,
   * `SERVICE_UPDATED`, `SERVICE_CREATED`), then one publication of the registry. The plan is made
   * again inside the transaction, so it is what is applied; a plan of no changes writes and
   * publishes nothing. A dry run reads the registry only.
   * The registry it leaves is the document's services, whose places the validation found unique,
   * so an apply never takes a place twice.
   * @throws {GatewayError} 400 from {@link parseRegistryDocument} (a reserved host among them), nothing applied.
   */
  async apply(body: unknown, actor: Actor, options: { dryRun: boolean }): Promise<RegistryPlan> {
    const declared = parseRegistryDocument(body, this.#reservedHosts);
    if (options.dryRun) return planRegistry(this.list(), declared);
    const plan = this.#write(() => {
      const planned = planRegistry(this.list(), declared);
      const now = new Date().toISOString();
      for (const { id } of planned.delete) {
        const service = this.get(id);
        this.#delete.run(id);
        this.#audit.record({ ...actor, action: 'SERVICE_DELETED', serviceId: id, details: { service } });
      }
      for (const { id, changes } of planned.update) {
        const after: StoredService = withoutEmptyHosts({ ...this.get(id), ...afterChanges(changes), updatedAt: now });
        this.#update.run(toParams(after));
        this.#audit.record({ ...actor, action: 'SERVICE_UPDATED', serviceId: id, details: { name: after.name, path: after.path, changes } });
      }
      const create = planned.create.map((item) => {
        const service: StoredService = { id: randomUUID(), ...item.service, createdAt: now, updatedAt: now };
        this.#insert.run(toParams(service));
        this.#audit.record({ ...actor, action: 'SERVICE_CREATED', serviceId: service.id, details: { service } });
        return { ...item, id: service.id };
      });
      return { ...planned, create };
    });
    if (plan.create.length + plan.update.length + plan.delete.length > 0) await this.publish();
    return plan;
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

  /** The row of service `id`; SERVICE_NOT_FOUND (404) when there is none, including for ids that are not UUIDs. */
  #row(id: string): ServiceRow {
    const row = isServiceId(id) ? this.#byId.get(id) : undefined;
    if (!row) throw new GatewayError('SERVICE_NOT_FOUND');
    return row;
  }

  /**
   * Service `id` as a conditional write finds it, inside the write's transaction, so nothing can
   * change it between the check and the write (RFC 9110 §13.2.2: a missing service is 404 first).
   * @throws {GatewayError} SERVICE_NOT_FOUND (404); PRECONDITION_FAILED (412) unless `ifMatch` holds for its ETag.
   */
  #current(id: string, ifMatch: IfMatch): StoredService {
    const row = this.#row(id);
    if (!ifMatchHolds(ifMatch, etagOf(row.version))) throw new GatewayError('PRECONDITION_FAILED');
    return fromRow(row);
  }

  /** Runs `change` in one transaction. Drops the {@link snapshot} whatever the outcome. */
  #write<T>(change: () => T): T {
    try {
      // IMMEDIATE: the change reads before it writes; a deferred transaction would fail at once with
      // SQLITE_BUSY, without waiting, when another connection (the access-log writer thread) wrote
      // in between (SQLite's WAL mode cannot upgrade a stale read snapshot).
      return this.#db.transaction(change).immediate();
    } finally {
      this.#snapshot = undefined;
    }
  }

  /**
   * No other service is reached where `service` is (design.md §5, route-uniqueness.ts): host-less,
   * no other host-less service has its path in any case, because the data plane routes on a
   * lowercased key (`/App` beside `/app` would be one route); with hosts, no other service names
   * one of them at that path. Run inside the write's transaction.
   * @throws {GatewayError} PATH_IN_USE (409), naming the host and path when the place is a pair ({@link routeInUse}).
   */
  #assertRouteFree(service: StoredService): void {
    for (const row of this.#samePath.iterate(service.path, service.id)) {
      const shared = sharedRoute(service, fromRow(row));
      if (shared) throw routeInUse(service.path, shared.host);
    }
  }
}
