/** The gateway's SQLite database and access-log day files, in a temporary folder (not a test file itself). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessLogReader } from '../../admin/access-log/reading/access-log-reader.js';
import { AccessLogStore } from '../../admin/access-log/writing/access-log-store.js';
import type { AccessLogStoreOptions } from '../../admin/access-log/writing/store-options.js';
import { accessLogDirOf } from '../../admin/access-log/day-files.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { recordsOf, type StoreAccessLogs } from '../../shared/backends/access-log-batch.js';
import { LOG_SERVICE } from './samples.js';

/** A migrated SQLite file in a temporary folder, with the admin's access-log store and reader over it, on this thread. */
export interface TempDatabase {
  db: Database;
  /** The folder of the access log's day files. */
  dir: string;
  store: AccessLogStore;
  accessLogs: AccessLogReader;
  /** Stores a batch as the admin's writer thread does, on this thread. */
  storeAccessLogs: StoreAccessLogs;
  /** Paths of every stored record of {@link LOG_SERVICE}, oldest first. */
  storedPaths(): string[];
  /** Closes the database and removes its folder. */
  close(): void;
}

/** A budget no test reaches: 1 TB, no disk reserve. */
export const UNBOUNDED = { maxBytes: 1e12, reserveBytes: 0 };

/**
 * Opens a {@link TempDatabase} through `openDatabase`, so every migration has run; `options`
 * override the store's: by default a retention of 100 years (the samples are dated 2025) and
 * {@link UNBOUNDED}.
 */
export function tempDatabase(options: Partial<AccessLogStoreOptions> = {}): TempDatabase {
  const folder = mkdtempSync(join(tmpdir(), 'gatehouse-contract-'));
  const path = join(folder, 'gateway.db');
  const db = openDatabase(path);
  const dir = accessLogDirOf(path);
  const store = new AccessLogStore(db, { dir, retentionDays: 36_500, budget: UNBOUNDED, ...options });
  const accessLogs = new AccessLogReader(dir);
  return {
    db,
    dir,
    store,
    accessLogs,
    storeAccessLogs: (batch) => store.storeBatches(batch.json.map((text) => recordsOf({ json: [text] }))),
    storedPaths() {
      const paths: string[] = [];
      for (let page; (page = accessLogs.listForService(LOG_SERVICE, 1000, paths.length).logs).length > 0; ) paths.push(...page.map((log) => log.path));
      return paths.reverse();
    },
    close() {
      accessLogs.close();
      store.close();
      db.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
