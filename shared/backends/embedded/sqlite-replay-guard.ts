import type { Database, Statement } from 'better-sqlite3';
import { usedIdKey, type ReplayGuard } from '../replay-guard.js';

/**
 * Embedded {@link ReplayGuard}: the `used_token_ids` table of the gateway's SQLite file, so a
 * restart does not forget. Forgotten ids are deleted as they are met and by every tenth insert.
 */
export class SqliteReplayGuard implements ReplayGuard {
  readonly #claim: Statement<{ key: string; until: number; now: number }>;
  readonly #purge: Statement<{ now: number }>;
  #inserts = 0;

  constructor(db: Database) {
    // An id whose time ran out is taken again (the upsert's WHERE); a live one changes nothing.
    this.#claim = db.prepare(
      `INSERT INTO used_token_ids (key, expires_at) VALUES ($key, $until)
       ON CONFLICT (key) DO UPDATE SET expires_at = excluded.expires_at WHERE used_token_ids.expires_at <= $now`,
    );
    this.#purge = db.prepare('DELETE FROM used_token_ids WHERE expires_at <= $now');
  }

  async firstUse(id: string, until: number): Promise<boolean> {
    const now = Date.now();
    if (++this.#inserts % 10 === 0) this.#purge.run({ now });
    return this.#claim.run({ key: usedIdKey(id), until, now }).changes === 1;
  }
}
