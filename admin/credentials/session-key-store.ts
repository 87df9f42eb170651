import { randomBytes } from 'node:crypto';
import type { Database } from 'better-sqlite3';
import type { Logger } from '../../shared/logger.js';

/** AES-256 key length, bytes (shared/identity/token-encryption.ts). */
const KEY_BYTES = 32;

/** The `session_encryption_key` row (admin/migrations.ts). */
interface StoredKeyRow {
  key: Buffer;
  retired_at: number | null;
}

/** What decides which keys seal and open refresh tokens. */
export interface SessionKeySettings {
  /** SESSION_ENCRYPTION_KEY's keys, the first sealing (`config.sessionEncryptionKeys`); empty when unset. */
  configured: readonly Buffer[];
  /** SESSION_TTL in ms: how long after the variable is set a session may still hold a token the stored key sealed. */
  sessionTtlMs: number;
  /** The current time, epoch ms (for tests); default `Date.now()`. */
  now?: number;
}

/**
 * The keys the admin process seals and opens refresh tokens with (shared/identity/token-encryption.ts:
 * the first seals, all open), so that sessions are re-checked at the identity provider with no
 * setting at all (design.md §4.12):
 * - SESSION_ENCRYPTION_KEY unset: the key kept in the database (`session_encryption_key`), made
 *   from 32 random bytes at the first start, as the assertion keys are (credentials/assertion-keys.ts).
 * - Set: its keys, then the stored key when there is one, which from then on only opens what it
 *   sealed: a session signed in before the variable was set keeps being re-checked. The first
 *   such start marks it retired; the first start SESSION_TTL after that deletes it, since every
 *   session it sealed has ended by then (a refresh re-seals with the first key).
 * Unsetting the variable again makes the stored key seal again (a new one if it was deleted);
 * tokens sealed under the variable's keys then no longer open and their sessions end at their next
 * check, as when a key is removed from the variable.
 * One SQLite transaction; says what it changed in the log, never a key.
 * @returns at least one 32-byte key.
 * @throws whatever SQLite throws (nothing is changed then).
 */
export function sessionEncryptionKeys(db: Database, settings: SessionKeySettings, logger: Logger): Buffer[] {
  const now = settings.now ?? Date.now();
  const keys = db.transaction(() => {
    const row = db.prepare<[], StoredKeyRow>('SELECT key, retired_at FROM session_encryption_key WHERE id = 1').get();
    if (settings.configured.length === 0) return [sealingKey(db, row, now, logger)];
    return [...settings.configured, ...openingOnlyKey(db, row, settings.sessionTtlMs, now, logger)];
  });
  return keys();
}

/** The stored key, made now when there is none, and no longer retired. */
function sealingKey(db: Database, row: StoredKeyRow | undefined, now: number, logger: Logger): Buffer {
  if (row === undefined) {
    const key = randomBytes(KEY_BYTES);
    db.prepare('INSERT INTO session_encryption_key (id, key, created_at) VALUES (1, ?, ?)').run(key, now);
    logger.info(
      'SESSION_ENCRYPTION_KEY is unset: generated a key that seals refresh tokens and stored it in the database, so sessions are re-checked at the identity provider; set SESSION_ENCRYPTION_KEY to keep the key outside the database',
    );
    return key;
  }
  if (row.retired_at !== null) {
    db.prepare('UPDATE session_encryption_key SET retired_at = NULL WHERE id = 1').run();
    logger.warn('SESSION_ENCRYPTION_KEY is unset again: the key stored in the database seals refresh tokens; sessions sealed under the variable\'s keys end at their next check');
  }
  return row.key;
}

/** The stored key, if any, as a key that only opens: retired now on the first start with the variable set, dropped SESSION_TTL later. */
function openingOnlyKey(db: Database, row: StoredKeyRow | undefined, sessionTtlMs: number, now: number, logger: Logger): Buffer[] {
  if (row === undefined) return [];
  if (row.retired_at === null) {
    db.prepare('UPDATE session_encryption_key SET retired_at = ? WHERE id = 1').run(now);
    logger.info('SESSION_ENCRYPTION_KEY is set: the key stored in the database now only opens the refresh tokens it sealed, and is deleted at the first start SESSION_TTL from now');
    return [row.key];
  }
  if (now - row.retired_at < sessionTtlMs) return [row.key];
  db.prepare('DELETE FROM session_encryption_key WHERE id = 1').run();
  logger.info('deleted the refresh-token key stored in the database: every session it sealed has ended, and SESSION_ENCRYPTION_KEY seals');
  return [];
}
