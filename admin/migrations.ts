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
  `
  -- The console's access-log queries, newest first (timestamp, then id) within a service. Each
  -- filter that narrows by equality has its index, ending in timestamp so the time range and the
  -- order come from the same index walk; method and path substring are checked on the rows walked.
  DROP INDEX access_logs_by_service;
  CREATE INDEX access_logs_by_service_time ON access_logs (service_id, timestamp);
  CREATE INDEX access_logs_by_service_class_time ON access_logs (service_id, status_code / 100, timestamp);
  CREATE INDEX access_logs_by_service_user_time ON access_logs (service_id, user_id, timestamp);

  -- Per-minute traffic rollups, written in the same transaction as the access-log rows they count
  -- (admin/access-log/traffic-rollups.ts). service_id is a service's id, or '*' for all services together;
  -- minute is epoch minutes (timestamp / 60000). lat_00 … lat_29 are the latency histogram's
  -- buckets (admin/access-log/latency-histogram.ts: <= 1 ms, <= 2 ms, … <= 60000 ms, above).
  CREATE TABLE access_rollups (
    service_id TEXT NOT NULL,
    minute INTEGER NOT NULL,
    count_1xx INTEGER NOT NULL DEFAULT 0,
    count_2xx INTEGER NOT NULL DEFAULT 0,
    count_3xx INTEGER NOT NULL DEFAULT 0,
    count_4xx INTEGER NOT NULL DEFAULT 0,
    count_5xx INTEGER NOT NULL DEFAULT 0,
    lat_00 INTEGER NOT NULL DEFAULT 0, lat_01 INTEGER NOT NULL DEFAULT 0, lat_02 INTEGER NOT NULL DEFAULT 0, lat_03 INTEGER NOT NULL DEFAULT 0, lat_04 INTEGER NOT NULL DEFAULT 0, lat_05 INTEGER NOT NULL DEFAULT 0,
    lat_06 INTEGER NOT NULL DEFAULT 0, lat_07 INTEGER NOT NULL DEFAULT 0, lat_08 INTEGER NOT NULL DEFAULT 0, lat_09 INTEGER NOT NULL DEFAULT 0, lat_10 INTEGER NOT NULL DEFAULT 0, lat_11 INTEGER NOT NULL DEFAULT 0,
    lat_12 INTEGER NOT NULL DEFAULT 0, lat_13 INTEGER NOT NULL DEFAULT 0, lat_14 INTEGER NOT NULL DEFAULT 0, lat_15 INTEGER NOT NULL DEFAULT 0, lat_16 INTEGER NOT NULL DEFAULT 0, lat_17 INTEGER NOT NULL DEFAULT 0,
    lat_18 INTEGER NOT NULL DEFAULT 0, lat_19 INTEGER NOT NULL DEFAULT 0, lat_20 INTEGER NOT NULL DEFAULT 0, lat_21 INTEGER NOT NULL DEFAULT 0, lat_22 INTEGER NOT NULL DEFAULT 0, lat_23 INTEGER NOT NULL DEFAULT 0,
    lat_24 INTEGER NOT NULL DEFAULT 0, lat_25 INTEGER NOT NULL DEFAULT 0, lat_26 INTEGER NOT NULL DEFAULT 0, lat_27 INTEGER NOT NULL DEFAULT 0, lat_28 INTEGER NOT NULL DEFAULT 0, lat_29 INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (service_id, minute)
  ) WITHOUT ROWID;
  CREATE INDEX access_rollups_by_minute ON access_rollups (minute);

  -- The console names the acting user by the email of their latest sign-in.
  CREATE INDEX audit_logs_logins ON audit_logs (user_id, id) WHERE action = 'USER_LOGIN';
  `,
  `
  -- The identity assertion's ES256 keys (design.md §4.7, admin/credentials/assertion-keys.ts). private_jwk is
  -- the secret JWK, kid its thumbprint; times are epoch ms. retired_at is null for the one key that
  -- signs; a retired key stays until its assertions have all expired, then is deleted.
  CREATE TABLE assertion_keys (
    kid TEXT PRIMARY KEY,
    private_jwk TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER
  );
  CREATE UNIQUE INDEX assertion_keys_signing ON assertion_keys (retired_at IS NULL) WHERE retired_at IS NULL;
  `,
  `
  -- Per-service access policies and bearer-token forwarding (design.md §4.7). access is the
  -- policy as JSON text ({"groups":[…],"emails":[…],"emailDomains":[…],"subjects":[…]}), NULL
  -- when the service has none; forward_authorization is 0 or 1.
  ALTER TABLE services ADD COLUMN access TEXT;
  ALTER TABLE services ADD COLUMN forward_authorization INTEGER NOT NULL DEFAULT 0;
  `,
  `
  -- Admin API tokens (design.md §4.8, admin/credentials/api-tokens.ts). secret_hash is the SHA-256 (hex) of the
  -- secret (ght_…), which is never stored; a request's token is found by it. created_by is the
  -- creating admin's subject; times are epoch ms; expires_at null: never. A revoked token keeps
  -- its row (revoked_at set) so the audit log can still name it as the actor of what it did.
  CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    secret_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    expires_at INTEGER,
    revoked_at INTEGER
  );
  `,
  `
  -- Each service's version (design.md §4.9): 1 when created, one more on every change to its row
  -- (an edit, a toggle, an apply). Its ETag is the version in quotes, which If-Match compares.
  ALTER TABLE services ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
  `,
  `
  -- Sessions that admins and the identity provider can end (shared/backends/session-store.ts).
  -- key is the SHA-256 of the session id (never stored); handle the public id of the sessions
  -- API; sub, email (lower-cased, verified, or '') and sid (the provider's session) find a
  -- user's or a provider session's sessions without a scan. data is the Session as JSON; times are
  -- epoch ms; idle_expires_at is NULL without SESSION_IDLE_TIMEOUT. Sessions made before had no
  -- handle and could not be listed or revoked: they end here (their users sign in once more).
  DROP TABLE sessions;
  CREATE TABLE sessions (
    key TEXT PRIMARY KEY,
    handle TEXT NOT NULL UNIQUE,
    sub TEXT NOT NULL,
    email TEXT NOT NULL,
    sid TEXT,
    data TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    idle_expires_at INTEGER
  );
  CREATE INDEX sessions_by_created ON sessions (created_at);
  CREATE INDEX sessions_by_sub ON sessions (sub, created_at);
  CREATE INDEX sessions_by_email ON sessions (email, created_at) WHERE email != '';
  CREATE INDEX sessions_by_sid ON sessions (sid) WHERE sid IS NOT NULL;
  CREATE INDEX sessions_by_expiry ON sessions (expires_at);
  CREATE INDEX sessions_by_idle_expiry ON sessions (idle_expires_at) WHERE idle_expires_at IS NOT NULL;

  -- Back-channel logout tokens' jti already used (shared/backends/replay-guard.ts): the SHA-256 of
  -- the id, kept until the token could no longer be accepted anyway (epoch ms).
  CREATE TABLE used_token_ids (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX used_token_ids_by_expiry ON used_token_ids (expires_at);
  `,
  `
  -- A service is a pool of targets (design.md §4.13, shared/types.ts). targets: JSON text
  -- [{"url":…,"weight":…}], target_url being the first one's url; NULL in the rows from before,
  -- which read as the one target target_url, weight 1. load_balancing: round_robin,
  -- least_requests, client_ip or cookie. health_check: JSON text {"path","intervalSeconds",
  -- "timeoutMs","healthyThreshold","unhealthyThreshold","expectStatus"}, NULL: no active checks.
  -- outlier_detection: JSON text {"maxFails","windowSeconds","ejectSeconds"}. retries: 0 to 5.
  ALTER TABLE services ADD COLUMN targets TEXT;
  ALTER TABLE services ADD COLUMN load_balancing TEXT NOT NULL DEFAULT 'round_robin';
  ALTER TABLE services ADD COLUMN health_check TEXT;
  ALTER TABLE services ADD COLUMN outlier_detection TEXT NOT NULL DEFAULT '{"maxFails":3,"windowSeconds":10,"ejectSeconds":30}';
  ALTER TABLE services ADD COLUMN retries INTEGER NOT NULL DEFAULT 1;
  `,
  `
  -- The key that seals refresh tokens when SESSION_ENCRYPTION_KEY is unset (design.md §4.12,
  -- admin/credentials/session-key-store.ts): 32 random bytes made at the first start, one row at
  -- most. retired_at: when a start first found the variable set; from then on the key only opens
  -- what it sealed, and it is deleted once SESSION_TTL has passed since. Times are epoch ms.
  CREATE TABLE session_encryption_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    key BLOB NOT NULL CHECK (length(key) = 32),
    created_at INTEGER NOT NULL,
    retired_at INTEGER
  );
  `,
  `
  -- An API token's scope may be 'write sessions' (design.md §4.8, admin/credentials/token-scope.ts):
  -- write, and ending an administrator's sessions. SQLite cannot change a CHECK in place, so the
  -- table is made again with the wider one (https://www.sqlite.org/lang_altertable.html#otheralter);
  -- every row keeps its scope, so no existing token gains the new one.
  CREATE TABLE api_tokens_scoped (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('read', 'write', 'write sessions')),
    secret_hash TEXT NOT NULL UNIQUE,
    created_by TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER,
    expires_at INTEGER,
    revoked_at INTEGER
  );
  INSERT INTO api_tokens_scoped SELECT id, name, scope, secret_hash, created_by, created_at, last_used_at, expires_at, revoked_at FROM api_tokens;
  DROP TABLE api_tokens;
  ALTER TABLE api_tokens_scoped RENAME TO api_tokens;
  `,
  `
  -- Services on host names (design.md §5). hosts: JSON text, the service's host names
  -- (lower-case A-labels, '*.' wildcard first labels), '[]' for none. A service at / on a host must
  -- be able to stand beside a host-less service at /, so path loses its table-level UNIQUE: SQLite
  -- cannot drop a constraint in place, so the table is made again
  -- (https://www.sqlite.org/lang_altertable.html#otheralter) with every other column and default
  -- as they were. Uniqueness is the registry's, in each write's transaction: host-less paths
  -- ignoring case, and (host, path) pairs (admin/registry/route-uniqueness.ts). The indexes keep
  -- what the UNIQUE one did: the list ordered by path, and finding a path in any case.
  CREATE TABLE services_hosted (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    target_url TEXT NOT NULL,
    require_auth INTEGER NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    enabled INTEGER NOT NULL DEFAULT 1,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    access TEXT,
    forward_authorization INTEGER NOT NULL DEFAULT 0,
    version INTEGER NOT NULL DEFAULT 1,
    targets TEXT,
    load_balancing TEXT NOT NULL DEFAULT 'round_robin',
    health_check TEXT,
    outlier_detection TEXT NOT NULL DEFAULT '{"maxFails":3,"windowSeconds":10,"ejectSeconds":30}',
    retries INTEGER NOT NULL DEFAULT 1,
    hosts TEXT NOT NULL DEFAULT '[]'
  );
  INSERT INTO services_hosted (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, access,
      forward_authorization, version, targets, load_balancing, health_check, outlier_detection, retries)
    SELECT id, name, path, target_url, require_auth, description, enabled, created_at, updated_at, access,
      forward_authorization, version, targets, load_balancing, health_check, outlier_detection, retries FROM services;
  DROP TABLE services;
  ALTER TABLE services_hosted RENAME TO services;
  CREATE INDEX services_by_path ON services (path);
  CREATE INDEX services_by_lower_path ON services (lower(path));
  `,
  `
  -- Host sessions (design.md §4.16): a service host's session cookie names a link, keyed by the
  -- SHA-256 of its value, to the user's session (its key) on that one host; it expires with it.
  CREATE TABLE session_links (
    key TEXT PRIMARY KEY,
    session_key TEXT NOT NULL,
    host TEXT NOT NULL,
    csrf_token TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  CREATE INDEX session_links_by_expiry ON session_links (expires_at);

  -- One-time codes handing a session to a service host, keyed by the SHA-256 of the code; single use, 60 s.
  CREATE TABLE host_handoff_codes (
    key TEXT PRIMARY KEY,
    data TEXT NOT NULL,
    expires_at INTEGER NOT NULL
  );
  `,
  `
  -- Certificates by ACME (design.md §4.15). The account per directory, its key sealed with the
  -- refresh tokens' key (shared/identity/token-encryption.ts).
  CREATE TABLE acme_accounts (
    directory_url TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    key_sealed TEXT NOT NULL,
    account_url TEXT,
    created_at INTEGER NOT NULL
  );
  -- One row per host ACME keeps a certificate for: the chain (PEM) and its key (sealed), when to
  -- renew (epoch ms), the last failure and when to try again; lease_holder/lease_until lock the
  -- host's order, one at a time across every process using this database.
  CREATE TABLE acme_certificates (
    host TEXT PRIMARY KEY,
    cert_pem TEXT,
    key_sealed TEXT,
    issuer TEXT,
    not_before INTEGER,
    not_after INTEGER,
    renew_at INTEGER,
    last_error TEXT,
    failures INTEGER NOT NULL DEFAULT 0,
    retry_at INTEGER,
    lease_holder TEXT,
    lease_until INTEGER,
    updated_at INTEGER NOT NULL
  );
  `,
  `
  -- Rules inside a service (design.md §4.18). rules: JSON text, the ordered list of
  -- { paths, methods?, action, access? }, '[]' for none; cors_preflight: 'auth' or 'public'.
  ALTER TABLE services ADD COLUMN rules TEXT NOT NULL DEFAULT '[]';
  ALTER TABLE services ADD COLUMN cors_preflight TEXT NOT NULL DEFAULT 'auth';
  `,
  `
  -- Step-up sign-in (design.md §4.18): max_age in seconds, or NULL for none; acr: JSON text of the
  -- accepted values, or NULL for none. A rule's own are in its JSON (rules).
  ALTER TABLE services ADD COLUMN max_age INTEGER;
  ALTER TABLE services ADD COLUMN acr TEXT;
  `,
];
