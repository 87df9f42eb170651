/**
 * `gatehouse tokens list|revoke <id>`: the break-glass way to see and revoke admin API tokens
 * (design.md §4.8), on the admin host, straight in the gateway's SQLite file (DATABASE_PATH), with
 * neither a session nor the admin process. For when no administrator can sign in to revoke a
 * leaked token, or the admin process is down. It works while the admin process runs too: SQLite
 * in WAL mode lets both open the file, a write waits for the other's (the busy timeout of
 * database.ts), and the running process looks every request's token up in the file, so a
 * revocation made here refuses the token's next request. Audited as the local operator.
 */
import { existsSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { VARIABLES } from '../../shared/config/variables.js';
import { errorCode } from '../../shared/error-code.js';
import { localOperator } from '../actor.js';
import { AuditLog } from '../audit-log.js';
import { ApiTokens, type ApiToken } from '../credentials/api-tokens.js';
import { openDatabase, type Database } from '../database.js';
import { CliError } from './admin-api.js';
import { textTable } from './text-table.js';

/** DATABASE_PATH's default, as the gateway has it (shared/config/config.ts). */
const DEFAULT_DATABASE_PATH = VARIABLES.find((variable) => variable.name === 'DATABASE_PATH')!.default!;

/** DATABASE_PATH from `env`, or the gateway's default; relative paths are from the working directory, as for the gateway. */
export function databasePathFromEnv(env: NodeJS.ProcessEnv): string {
  return env.DATABASE_PATH?.trim() || DEFAULT_DATABASE_PATH;
}

/** `tokens list`: every token not revoked (expired ones marked), newest first, as a table and a count. */
export function listLocalTokens(path: string): string {
  return withTokens(path, (tokens) => {
    const listed = tokens.list();
    if (listed.length === 0) return `No tokens in ${path} (none made, or every one revoked).\n`;
    const now = Date.now();
    const rows = listed.map((token) => [token.id, printable(token.name), token.scope, printable(token.createdBy), token.createdAt, token.lastUsedAt ?? 'never', expiry(token, now)]);
    const count = `${listed.length} ${listed.length === 1 ? 'token' : 'tokens'} not revoked in ${path}.`;
    return `${textTable([['ID', 'NAME', 'SCOPE', 'CREATED BY', 'CREATED', 'LAST USED', 'EXPIRES'], ...rows])}${count}\n`;
  });
}

/**
 * `tokens revoke <id>`: revokes the token at once, audited as `TOKEN_REVOKED` by
 * the local operator (actor.ts: `local:<os user>`).
 * @throws {CliError} for an id that is no token, or one already revoked (nothing changes).
 */
export function revokeLocalToken(path: string, id: string): string {
  return withTokens(path, (tokens) => {
    let token: ApiToken;
    try {
      token = tokens.revoke(id, localOperator());
    } catch (error) {
      if (errorCode(error) === 'TOKEN_NOT_FOUND') throw new CliError(`no token ${id} in ${path}, or it is revoked already (gatehouse tokens list shows the others).`);
      throw error;
    }
    return `Revoked token ${token.id} “${printable(token.name)}” (${token.scope}): its requests are refused (401) from now on.\n`;
  });
}

/** Runs `work` over the tokens of the database at `path`, closing it after. */
function withTokens(path: string, work: (tokens: ApiTokens) => string): string {
  const db = openGatewayDatabase(path);
  try {
    return work(new ApiTokens(db, new AuditLog(db)));
  } finally {
    db.close();
  }
}

/**
 * The gateway's database at `path`, opened as the admin process opens it (WAL, busy timeout, the
 * pending migrations applied as a start of this version would). A missing file is not created and
 * a file that is no Gatehouse database (no migration applied) is not touched: either means a wrong
 * DATABASE_PATH.
 * @throws {CliError} saying which.
 */
function openGatewayDatabase(path: string): Database {
  if (!existsSync(path)) throw new CliError(`no database at ${path}: run this on the admin host with the admin process's DATABASE_PATH.`);
  let version: number;
  try {
    const probe = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
    try {
      version = probe.pragma('user_version', { simple: true }) as number;
    } finally {
      probe.close();
    }
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as Error).message}`);
  }
  if (version === 0) throw new CliError(`${path} is not a Gatehouse database: set DATABASE_PATH to the admin process's.`);
  return openDatabase(path);
}

/** `token`'s expiry, `never`, or marked expired. */
function expiry(token: ApiToken, now: number): string {
  if (token.expiresAt === null) return 'never';
  return Date.parse(token.expiresAt) <= now ? `${token.expiresAt} (expired)` : token.expiresAt;
}

/** `text` with control characters (a newline, a terminal escape) shown as `?`, so a name cannot redraw the operator's terminal. */
const printable = (text: string): string => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
