import type { Database, Statement } from 'better-sqlite3';
import { isWellFormedSessionId, newSessionId, sessionKey, type SessionStore } from '../session-store.js';
import type { Session } from '../types.js';

const PURGE_INTERVAL_MS = 60_000;

/**
 * Embedded {@link SessionStore}: the `sessions` table of the gateway's SQLite file (created by the
 * admin plane's migrations). Expired rows are ignored on read and purged once a minute.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #insert: Statement<[string, string, number]>;
  readonly #select: Statement<[string, number], { data: string }>;
  readonly #delete: Statement<[string]>;
  readonly #purge: Statement<[number]>;
  readonly #timer: NodeJS.Timeout;

  constructor(db: Database) {
    this.#insert = db.prepare('INSERT INTO sessions (key, data, expires_at) VALUES (?, ?, ?)');
    this.#select = db.prepare('SELECT data FROM sessions WHERE key = ? AND expires_at > ?');
    this.#delete = db.prepare('DELETE FROM sessions WHERE key = ?');
    this.#purge = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
    this.#timer = setInterval(() => this.#purge.run(Date.now()), PURGE_INTERVAL_MS).unref();
  }

  async create(session: Session): Promise<string> {
    const id = newSessionId();
    this.#insert.run(sessionKey(id), JSON.stringify(session), session.expiresAt);
    return id;
  }

  async get(sessionId: string): Promise<Session | null> {
    if (!isWellFormedSessionId(sessionId)) return null;
    const row = this.#select.get(sessionKey(sessionId), Date.now());
    return row ? (JSON.parse(row.data) as Session) : null;
  }

  async destroy(sessionId: string): Promise<void> {
    if (isWellFormedSessionId(sessionId)) this.#delete.run(sessionKey(sessionId));
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
  }
}
