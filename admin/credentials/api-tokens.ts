import { createHash, randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { GatewayError } from '../../shared/errors.js';
import { isWellFormedApiTokenSecret, newApiTokenSecret } from '../../shared/identity/secrets.js';
import type { Actor, AuditLog } from '../audit-log.js';
import { parseTokenCreate } from './token-validation.js';
import type { TokenScope } from './token-scope.js';

/** An admin API token as the API and the console show it (design.md §4.8): never its secret or hash. */
export interface ApiToken {
  /** A UUID. */
  id: string;
  name: string;
  scope: TokenScope;
  /** The subject (`sub`) of the admin who created it. */
  createdBy: string;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** The last request it authenticated, to within {@link LAST_USED_RESOLUTION_MS} (ISO 8601 UTC), or null. */
  lastUsedAt: string | null;
  /** ISO 8601 UTC, or null for a token that never expires. */
  expiresAt: string | null;
}

/** A new token and its secret, which exists only in this answer (`ght_…`). */
export interface CreatedApiToken {
  token: ApiToken;
  secret: string;
}

/** An `api_tokens` row (times epoch ms). */
interface TokenRow {
  id: string;
  name: string;
  scope: TokenScope;
  created_by: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

/** How stale `lastUsedAt` may be: a token's row is written at most once per this many ms, not per request. */
export const LAST_USED_RESOLUTION_MS = 60_000;

const DAY_MS = 24 * 60 * 60_000;
const ACTOR_PREFIX = 'token:';

/** The audit log's `user_id` for what a token does (design.md §4.8): `token:<id>`. */
export const tokenActorId = (tokenId: string): string => ACTOR_PREFIX + tokenId;

/** The SHA-256 (hex) of a secret: what the table keeps and looks a request's token up by. */
const secretHash = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/**
 * The admin API tokens in SQLite (`api_tokens`, design.md §4.8). Creation and revocation change the
 * row and record their audit entry in one transaction. Only the secret's SHA-256 is stored: a copy
 * of the database (or a backup) holds no usable token.
 */
export class ApiTokens {
  readonly #db: Database;
  readonly #audit: AuditLog;
  readonly #insert: Statement<[TokenRow & { secret_hash: string }]>;
  readonly #live: Statement<[], TokenRow>;
  readonly #byId: Statement<[string], TokenRow>;
  readonly #byHash: Statement<[string], TokenRow>;
  readonly #revoke: Statement<[number, string]>;
  readonly #touch: Statement<[number, string]>;
  readonly #name: Statement<[string], { name: string }>;

  constructor(db: Database, audit: AuditLog) {
    this.#db = db;
    this.#audit = audit;
    this.#insert = db.prepare(
      `INSERT INTO api_tokens (id, name, scope, secret_hash, created_by, created_at, last_used_at, expires_at, revoked_at)
       VALUES (@id, @name, @scope, @secret_hash, @created_by, @created_at, @last_used_at, @expires_at, @revoked_at)`,
    );
    const columns = 'id, name, scope, created_by, created_at, last_used_at, expires_at, revoked_at';
    this.#live = db.prepare(`SELECT ${columns} FROM api_tokens WHERE revoked_at IS NULL ORDER BY created_at DESC, id`);
    this.#byId = db.prepare(`SELECT ${columns} FROM api_tokens WHERE id = ? AND revoked_at IS NULL`);
    this.#byHash = db.prepare(`SELECT ${columns} FROM api_tokens WHERE secret_hash = ?`);
    this.#revoke = db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ?');
    this.#touch = db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?');
    this.#name = db.prepare('SELECT name FROM api_tokens WHERE id = ?');
  }

  /**
   * Creates a token from a POST /api/tokens body for the admin `actor` (a session's subject, never
   * a token: design.md §4.8), audited as `TOKEN_CREATED`.
   * @throws {GatewayError} BAD_REQUEST for an invalid body (token-validation.ts).
   */
  create(body: unknown, actor: Actor & { userId: string }): CreatedApiToken {
    const input = parseTokenCreate(body);
    const now = Date.now();
    const secret = newApiTokenSecret();
    const row: TokenRow = {
      id: randomUUID(),
      name: input.name,
      scope: input.scope,
      created_by: actor.userId,
      created_at: now,
      last_used_at: null,
      expires_at: input.expiresInDays === null ? null : now + input.expiresInDays * DAY_MS,
      revoked_at: null,
    };
    const token = fromRow(row);
    this.#db.transaction(() => {
      this.#insert.run({ ...row, secret_hash: secretHash(secret) });
      this.#audit.record({ ...actor, action: 'TOKEN_CREATED', serviceId: null, details: { token: auditDetails(token) } });
    })();
    return { token, secret };
  }

  /** Every token not revoked (expired ones included, until revoked), newest first. */
  list(): ApiToken[] {
    return this.#live.all().map(fromRow);
  }

  /**
   * Revokes a token at once, audited as `TOKEN_REVOKED`, and returns it as it was. Its next request
   * gets 401 in every process using this database, whichever process revoked it: nothing caches a
   * token, each request looks it up ({@link authenticate}).
   * @throws {GatewayError} TOKEN_NOT_FOUND (404) for an unknown or already revoked id, any text.
   */
  revoke(id: string, actor: Actor): ApiToken {
    return this.#db.transaction(() => {
      const row = this.#byId.get(id);
      if (!row) throw new GatewayError('TOKEN_NOT_FOUND');
      this.#revoke.run(Date.now(), id);
      const token = fromRow(row);
      this.#audit.record({ ...actor, action: 'TOKEN_REVOKED', serviceId: null, details: { token: auditDetails(token) } });
      return token;
    }).immediate(); // reads, then writes: IMMEDIATE, see ServiceRegistry's #write
  }

  /**
   * The live token whose secret is `secret`, or null when there is none: not `ght_…` of the right
   * shape, unknown, revoked or expired. The secret is not compared with anything: the row is found
   * by the secret's SHA-256, so how long the lookup takes depends on that hash alone, and steering
   * it toward a stored one means finding a SHA-256 preimage; no constant-time comparison is needed.
   * Records the use in `last_used_at` when the stored one is {@link LAST_USED_RESOLUTION_MS} old or
   * more, so a busy token costs one write a minute, not one per request.
   */
  authenticate(secret: string): ApiToken | null {
    if (!isWellFormedApiTokenSecret(secret)) return null;
    const row = this.#byHash.get(secretHash(secret));
    const now = Date.now();
    if (!row || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= now)) return null;
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_RESOLUTION_MS) {
      this.#touch.run(now, row.id);
      row.last_used_at = now;
    }
    return fromRow(row);
  }

  /**
   * The names of the tokens among the audit log's actors (`token:<id>`), by actor id, revoked
   * tokens included: to name who acted in the console.
   */
  actorNames(userIds: Iterable<string | null>): Map<string, string> {
    const names = new Map<string, string>();
    for (const userId of new Set(userIds)) {
      if (!userId?.startsWith(ACTOR_PREFIX)) continue;
      const row = this.#name.get(userId.slice(ACTOR_PREFIX.length));
      if (row) names.set(userId, row.name);
    }
    return names;
  }
}

function fromRow(row: TokenRow): ApiToken {
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  return {
    id: row.id,
    name: row.name,
    scope: row.scope,
    createdBy: row.created_by,
    createdAt: iso(row.created_at)!,
    lastUsedAt: iso(row.last_used_at),
    expiresAt: iso(row.expires_at),
  };
}

/** What the audit log keeps of a token: never its secret or hash. */
function auditDetails(token: ApiToken): { id: string; name: string; scope: TokenScope; expiresAt: string | null } {
  return { id: token.id, name: token.name, scope: token.scope, expiresAt: token.expiresAt };
}
