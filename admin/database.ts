import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3, { type Database } from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export type { Database };

/**
 * Opens (creating it and its folder) the gateway's SQLite file with WAL journaling,
 * `synchronous=NORMAL` (durable across process crashes; a power cut may lose the last commits) and
 * a 5 s busy timeout, then applies pending {@link MIGRATIONS}, each in one transaction.
 * @throws when the file cannot be opened or a migration fails (the database is left at the last good version).
 */
export function openDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new BetterSqlite3(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  migrate(db);
  return db;
}

function migrate(db: Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
