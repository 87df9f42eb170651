/** The service registry on a SQLite file in a temporary folder, with an in-memory bus (not a test file itself). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { AuditLog } from '../../admin/audit-log.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { MIGRATIONS } from '../../admin/migrations.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import type { Service } from '../../shared/types.js';

/** A {@link ServiceRegistry} over a migrated SQLite file (`gateway.db` in {@link dir}), its audit log and bus. */
export interface TempRegistry {
  /** The temporary folder; removed by {@link close}. */
  dir: string;
  db: Database;
  audit: AuditLog;
  bus: MemoryEventBus;
  registry: ServiceRegistry;
  /** Every registry the bus has carried, oldest first. */
  snapshots: (readonly Service[])[];
  /** Closes the database and removes its folder. */
  close(): void;
}

/** Opens a {@link TempRegistry} in a new folder named from `prefix` (such as `gatehouse-registry-`). */
export function tempRegistry(prefix: string): TempRegistry {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const db = openDatabase(join(dir, 'gateway.db'));
  const audit = new AuditLog(db);
  const bus = new MemoryEventBus();
  const snapshots: (readonly Service[])[] = [];
  bus.onRegistry((services) => snapshots.push(services));
  return {
    dir,
    db,
    audit,
    bus,
    registry: new ServiceRegistry(db, audit, bus),
    snapshots,
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Writes at `path` a database as a gateway at schema version `version` left it (only the first
 * `version` migrations run), holding one service: Old at /old, proxying to `targetUrl`, requiring
 * sign-in, enabled, created and updated 2025-01-01T00:00:00.000Z. Answers that service's id.
 */
export function databaseAtVersion(path: string, version: number, targetUrl: string): string {
  const legacy = new BetterSqlite3(path);
  for (const migration of MIGRATIONS.slice(0, version)) legacy.exec(migration);
  legacy.pragma(`user_version = ${version}`);
  const id = crypto.randomUUID();
  legacy
    .prepare(`INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at) VALUES (?, 'Old', '/old', ?, 1, '', 1, ?, ?)`)
    .run(id, targetUrl, '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z');
  legacy.close();
  return id;
}
