/**
 * Schema migrations, applied in order by `user_version` (SQLite PRAGMA user_version): entry i
 * brings a database from version i to i + 1. Append only; never edit a shipped entry.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE services (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    path TEXT NOT NULL UNIQUE,
    target_url TEXT NOT NULL,
    require_auth INTEGER NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  -- timestamp is epoch ms (the API shows ISO 8601); event_id makes re-delivered batches harmless.
  CREATE TABLE access_logs (
    id INTEGER PRIMARY KEY,
    event_id TEXT NOT NULL UNIQUE,
    service_id TEXT NOT NULL,
    user_id TEXT,
    path TEXT NOT NULL,
    method TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    response_time_ms INTEGER NOT NULL,
    ip_address TEXT NOT NULL,
    timestamp INTEGER NOT NULL
  );
  CREATE INDEX access_logs_by_service ON access_logs (service_id, id);

  CREATE TABLE audit_logs (
    id INTEGER PRIMARY KEY,
    action TEXT NOT NULL,
    user_id TEXT,
    service_id TEXT,
    ip_address TEXT,
    details TEXT NOT NULL DEFAULT '{}',
    timestamp INTEGER NOT NULL
  );

  -- key is the SHA-256 of the session id; the id itself is never stored.
  CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX sessions_by_expiry ON sessions (expires_at);

  -- OpenID Connect login transactions, keyed by the SHA-256 of their state; single use.
  CREATE TABLE login_transactions (
    key TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
];
