import type { Database, Statement } from 'better-sqlite3';
import { ExpiringCache } from '../../expiring-cache.js';
import { isWellFormedSecret, newSessionId } from '../../secrets.js';
import { sessionKey, type SessionStore } from '../session-store.js';
import type { Session } from '../../types.js';

const PURGE_INTERVAL_MS = 60_000;
/** Sessions kept in memory (each a few hundred bytes), least recently read dropped first. */
const CACHE_ENTRIES = 10_000;
/** How long a cached session is served before SQLite is asked again, in ms. */
const CACHE_TTL_MS = 60_000;

/**
 * Embedded {@link SessionStore}: the `sessions` table of the gateway's SQLite file (created by the
 * admin plane's migrations). Expired rows are ignored on read and purged once a minute. Reads go
 * through a {@link ExpiringCache}: this process is the only writer of the table, and a destroyed
 * session leaves the cache in the same call, so a cached session is never one that was revoked,
 * and the data plane skips a SQLite read and a JSON parse on nearly every request.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #insert: Statement<[string, string, number]>;
  readonly #select: Statement<[string, number], { data: string }>;
  readonly #delete: Statement<[string]>;
  readonly #purge: Statement<[number]>;
  readonly #timer: NodeJS.Timeout;
  readonly #cache = new ExpiringCache<Session>(CACHE_ENTRIES);

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
    if (!isWellFormedSecret(sessionId)) return null;
    const key = sessionKey(sessionId);
    const now = Date.now();
    const cached = this.#cache.get(key, now);
    if (cached !== undefined) return cached.expiresAt > now ? cached : null;
    const row = this.#select.get(key, now);
    if (!row) return null;
    const session = JSON.parse(row.data) as Session;
    this.#cache.set(key, session, now + CACHE_TTL_MS);
    return session;
  }

  async destroy(sessionId: string): Promise<void> {
    if (!isWellFormedSecret(sessionId)) return;
    const key = sessionKey(sessionId);
    this.#cache.delete(key);
    this.#delete.run(key);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#cache.clear();
  }
}
