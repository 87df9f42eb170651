/** The gateway's SQLite database, migrated, in a temporary folder (not a test file itself). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessLogStore } from '../../admin/access-log/access-log-store.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { recordsOf, type StoreAccessLogs } from '../../shared/backends/access-log-batch.js';
import { LOG_SERVICE } from './samples.js';

/** A migrated SQLite file in a temporary folder, with the admin's access-log store over it. */
export interface TempDatabase {
  db: Database;
  accessLogs: AccessLogStore;
  /** Stores a batch as the admin's writer does, on this thread (`accessLogs.insertBatch`). */
  storeAccessLogs: StoreAccessLogs;
  /** Paths of every stored record of {@link LOG_SERVICE}, oldest first. */
  storedPaths(): string[];
  /** Closes the database and removes its folder. */
  close(): void;
}

/** Opens a {@link TempDatabase} through `openDatabase`, so every migration has run. */
export function tempDatabase(): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-contract-'));
  const db = openDatabase(join(dir, 'gateway.db'));
  const accessLogs = new AccessLogStore(db);
  const select = db.prepare<[string], { path: string }>('SELECT path FROM access_logs WHERE service_id = ? ORDER BY id');
  return {
    db,
    accessLogs,
    storeAccessLogs: (batch) => accessLogs.insertBatch(recordsOf(batch)),
    storedPaths: () => select.all(LOG_SERVICE).map((row) => row.path),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
