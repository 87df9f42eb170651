import type { Database, Statement } from 'better-sqlite3';
import { ExpiringCache } from '../../expiring-cache.js';
import { isWellFormedHandle, isWellFormedSecret, newSessionId } from '../../identity/secrets.js';
import { emailKey, keepIdentity, sessionKey, type SessionLink, type SessionQuery, type SessionReadOptions, type StoreReadWatch, type SessionSelector, type SessionStore } from '../session-store.js';
import type { Session } from '../../types.js';

const PURGE_INTERVAL_MS = 60_000;
/** Sessions kept in memory (each a few hundred bytes), least recently read dropped first. */
const CACHE_ENTRIES = 10_000;
/** How long a cached session is served before SQLite is asked again, in ms. */
const CACHE_TTL_MS = 60_000;
/** A live row: neither its TTL nor its idle timeout has passed (`$now` in epoch ms). */
const LIVE = 'expires_at > $now AND (idle_expires_at IS NULL OR idle_expires_at > $now)';

export interface SqliteSessionStoreOptions {
  /** SESSION_IDLE_TIMEOUT in ms: a session unused this long ends; undefined: never. */
  idleTimeoutMs?: number;
}

interface Row {
  key: string;
  data: string;
  last_seen_at: number;
}

/**
 * Embedded {@link SessionStore}: the `sessions` table of the gateway's SQLite file (created by the
 * admin plane's migrations), one row per session with its handle, subject, email and provider
 * session indexed. Ended rows are ignored on read and purged once a minute. Reads go through an
 * {@link ExpiringCache}: this process is the only writer of the table, and every change evicts the
 * entry in the same call, so a cached session is never one that was ended, and the data plane skips
 * a SQLite read and a JSON parse on nearly every request. Host sessions are rows of `session_links`
 * naming a session's key (cached as they never change). Revalidation requests and refresh locks
 * stay in this process (there is no other).
 */
export class SqliteSessionStore implements SessionStore {
  readonly #db: Database;
  readonly #idleTimeoutMs: number | undefined;
  readonly #statements;
  readonly #timer: NodeJS.Timeout;
  readonly #cache = new ExpiringCache<Session>(CACHE_ENTRIES);
  /** Links by their key: a link never changes, so it is served until its session's expiry. */
  readonly #links = new ExpiringCache<SessionLink>(CACHE_ENTRIES);
  readonly #listeners = new Set<(handle: string) => void>();
  /** Refresh locks: handle → epoch ms the lock lapses. */
  readonly #locks = new Map<string, number>();

  constructor(db: Database, options: SqliteSessionStoreOptions = {}) {
    this.#db = db;
    this.#idleTimeoutMs = options.idleTimeoutMs;
    this.#statements = prepare(db);
    this.#timer = setInterval(() => this.#purge(), PURGE_INTERVAL_MS).unref();
  }

  async create(session: Session): Promise<string> {
    const id = newSessionId();
    this.#statements.insert.run({
      key: sessionKey(id),
      handle: session.handle,
      sub: session.user.sub,
      email: emailKey(session),
      sid: session.sid ?? null,
      data: JSON.stringify(session),
      created_at: session.createdAt,
      expires_at: session.expiresAt,
      last_seen_at: session.lastSeenAt,
      idle_expires_at: this.#idleExpiry(session.lastSeenAt),
    });
    return id;
  }

  async link(handle: string, host: string, csrfToken: string): Promise<string | null> {
    if (!isWellFormedHandle(handle)) return null;
    const row = this.#statements.byHandle.get({ handle, now: Date.now() });
    if (!row) return null;
    const id = newSessionId();
    const expiresAt = (JSON.parse(row.data) as Session).expiresAt;
    this.#statements.insertLink.run({ key: sessionKey(id), session_key: row.key, host, csrf_token: csrfToken, expires_at: expiresAt });
    return id;
  }

  async getLink(linkId: string, watch?: StoreReadWatch): Promise<SessionLink | null> {
    if (!isWellFormedSecret(linkId)) return null;
    const key = sessionKey(linkId);
    const now = Date.now();
    const cached = this.#links.get(key, now);
    if (cached !== undefined) return cached;
    const read = async () => this.#statements.linkByKey.get({ key, now });
    const row = await (watch ? watch(read) : read());
    if (!row) return null;
    const link: SessionLink = { sessionKey: row.session_key, host: row.host, csrfToken: row.csrf_token };
    this.#links.set(key, link, row.expires_at);
    return link;
  }

  async get(sessionId: string, options: SessionReadOptions = {}): Promise<Session | null> {
    return isWellFormedSecret(sessionId) ? this.getByKey(sessionKey(sessionId), options) : null;
  }

  async getByKey(key: string, options: SessionReadOptions = {}): Promise<Session | null> {
    const now = Date.now();
    const cached = options.fresh ? undefined : this.#cache.get(key, now);
    if (cached !== undefined) return cached.expiresAt > now ? cached : null;
    const read = async () => this.#statements.byKey.get({ key, now });
    const row = await (options.watch ? options.watch(read) : read());
    if (!row) return null;
    const session = sessionOf(row);
    this.#cache.set(key, session, now + CACHE_TTL_MS);
    return session;
  }

  async destroy(sessionId: string): Promise<void> {
    if (!isWellFormedSecret(sessionId)) return;
    const key = sessionKey(sessionId);
    this.#cache.delete(key);
    this.#statements.deleteKey.run({ key });
  }

  async touch(sessionId: string, at: number): Promise<void> {
    if (isWellFormedSecret(sessionId)) await this.touchByKey(sessionKey(sessionId), at);
  }

  async touchByKey(key: string, at: number): Promise<void> {
    this.#statements.touch.run({ key, at, idle: this.#idleExpiry(at), now: Date.now() });
    const cached = this.#cache.get(key, at);
    if (cached !== undefined) cached.lastSeenAt = Math.max(cached.lastSeenAt, at);
  }

  async byHandle(handle: string): Promise<Session | null> {
    if (!isWellFormedHandle(handle)) return null;
    const row = this.#statements.byHandle.get({ handle, now: Date.now() });
    return row ? sessionOf(row) : null;
  }

  async update(handle: string, change: (current: Session) => Session): Promise<boolean> {
    if (!isWellFormedHandle(handle)) return false;
    return this.#db.transaction(() => {
      const row = this.#statements.byHandle.get({ handle, now: Date.now() });
      if (!row) return false;
      const current = sessionOf(row);
      const next = keepIdentity(current, change(current));
      this.#statements.write.run({ key: row.key, data: JSON.stringify(next), email: emailKey(next) });
      this.#cache.delete(row.key);
      return true;
    })();
  }

  async list(query: SessionQuery): Promise<{ sessions: Session[]; total: number }> {
    const now = Date.now();
    const user = query.user ?? null;
    const params = { now, user, email: user?.toLowerCase() ?? null };
    const { total } = this.#statements.count.get(params)!;
    const rows = this.#statements.page.all({ ...params, limit: query.limit, offset: query.offset });
    return { sessions: rows.map(sessionOf), total };
  }

  async find(selector: SessionSelector): Promise<Session[]> {
    const now = Date.now();
    const rows = 'sub' in selector ? this.#statements.bySub.all({ sub: selector.sub, now }) : this.#statements.bySid.all({ sid: selector.sid, now });
    return rows.map(sessionOf);
  }

  async revoke(handles: readonly string[]): Promise<number> {
    const now = Date.now();
    return this.#db.transaction(() => {
      let live = 0;
      for (const handle of handles) {
        const ended = this.#statements.deleteHandle.get({ handle, now });
        if (!ended) continue;
        this.#cache.delete(ended.key);
        if (ended.live) live++;
      }
      return live;
    })();
  }

  requestRevalidation(handle: string): void {
    // Asynchronous, as across processes: the request that asked never waits for the answer.
    setImmediate(() => {
      for (const listener of this.#listeners) listener(handle);
    });
  }

  onRevalidationRequest(listener: (handle: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async lockRefresh(handle: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    if ((this.#locks.get(handle) ?? 0) > now) return false;
    this.#locks.set(handle, now + ttlMs);
    return true;
  }

  async unlockRefresh(handle: string): Promise<void> {
    this.#locks.delete(handle);
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#cache.clear();
    this.#listeners.clear();
  }

  #purge(): void {
    const now = Date.now();
    this.#statements.purge.run({ now });
    this.#statements.purgeLinks.run({ now });
  }

  #idleExpiry(lastUse: number): number | null {
    return this.#idleTimeoutMs === undefined ? null : lastUse + this.#idleTimeoutMs;
  }
}

/** The session a row holds, with the row's own record of its last use. */
function sessionOf(row: Row): Session {
  const session = JSON.parse(row.data) as Session;
  session.lastSeenAt = row.last_seen_at;
  return session;
}

/** The store's statements; named parameters, `$now` in epoch ms. */
function prepare(db: Database) {
  const columns = 'key, data, last_seen_at';
  const userMatch = '($user IS NULL OR sub = $user OR (email = $email AND email != \'\'))';
  return {
    insert: db.prepare(
      `INSERT INTO sessions (key, handle, sub, email, sid, data, created_at, expires_at, last_seen_at, idle_expires_at)
       VALUES ($key, $handle, $sub, $email, $sid, $data, $created_at, $expires_at, $last_seen_at, $idle_expires_at)`,
    ),
    byKey: db.prepare(`SELECT ${columns} FROM sessions WHERE key = $key AND ${LIVE}`) as Statement<[{ key: string; now: number }], Row>,
    byHandle: db.prepare(`SELECT ${columns} FROM sessions WHERE handle = $handle AND ${LIVE}`) as Statement<[{ handle: string; now: number }], Row>,
    bySub: db.prepare(`SELECT ${columns} FROM sessions WHERE sub = $sub AND ${LIVE}`) as Statement<[{ sub: string; now: number }], Row>,
    bySid: db.prepare(`SELECT ${columns} FROM sessions WHERE sid = $sid AND ${LIVE}`) as Statement<[{ sid: string; now: number }], Row>,
    count: db.prepare(`SELECT count(*) AS total FROM sessions WHERE ${userMatch} AND ${LIVE}`) as Statement<[Record<string, unknown>], { total: number }>,
    page: db.prepare(
      `SELECT ${columns} FROM sessions WHERE ${userMatch} AND ${LIVE} ORDER BY created_at DESC, rowid DESC LIMIT $limit OFFSET $offset`,
    ) as Statement<[Record<string, unknown>], Row>,
    // An older use recorded late never shortens the idle life (max; NULL, without an idle timeout, stays NULL).
    touch: db.prepare(
      `UPDATE sessions SET last_seen_at = max(last_seen_at, $at), idle_expires_at = max(coalesce(idle_expires_at, $idle), $idle) WHERE key = $key AND ${LIVE}`,
    ),
    write: db.prepare('UPDATE sessions SET data = $data, email = $email WHERE key = $key'),
    deleteKey: db.prepare('DELETE FROM sessions WHERE key = $key'),
    deleteHandle: db.prepare(`DELETE FROM sessions WHERE handle = $handle RETURNING key, ${LIVE} AS live`) as Statement<
      [{ handle: string; now: number }],
      { key: string; live: number }
    >,
    purge: db.prepare('DELETE FROM sessions WHERE expires_at <= $now OR idle_expires_at <= $now'),
    insertLink: db.prepare('INSERT INTO session_links (key, session_key, host, csrf_token, expires_at) VALUES ($key, $session_key, $host, $csrf_token, $expires_at)'),
    linkByKey: db.prepare('SELECT session_key, host, csrf_token, expires_at FROM session_links WHERE key = $key AND expires_at > $now') as Statement<
      [{ key: string; now: number }],
      { session_key: string; host: string; csrf_token: string; expires_at: number }
    >,
    purgeLinks: db.prepare('DELETE FROM session_links WHERE expires_at <= $now'),
  };
}
