/**
 * A gateway for the access-log scale scenario (access-log-scale.ts): an embedded gateway started
 * as a real process by gateway-stack.ts, whose database was prepared before it started with
 * - a public service at `/logged` (forwarding to the bench upstream): the service whose access
 *   log is filled, read, and proxied to;
 * - an admin API token (scope `read`) for the admin API (README "API tokens");
 * - an admin session (a signed-in user with `isAdmin`) for the console page, made through the
 *   session store the gateway uses, as seed.ts makes its user's: no OpenID provider needed;
 * - `records` access-log records of `/logged` over the last `days` days (access-log-fill.ts).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiTokens } from '../../admin/credentials/api-tokens.js';
import { AuditLog } from '../../admin/audit-log.js';
import { openDatabase } from '../../admin/database.js';
import { ServiceRegistry } from '../../admin/registry/service-registry.js';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { loadConfig } from '../../shared/config/config.js';
import { fillAccessLog, type FillResult } from './access-log-fill.js';
import { startGatewayStack, type GatewayStack } from '../gateway-stack.js';
import { createSessionCookie } from '../seed.js';

/** Where the filled service is mounted. */
export const LOGGED_PREFIX = '/logged';

export interface ScaleGatewayOptions {
  /** Names the gateway's folder, database and log files, e.g. `access-log-10M`. */
  name: string;
  /** Access-log records stored before it starts. */
  records: number;
  /** Whole UTC days before today they are spread over (access-log-fill.ts). */
  days: number;
  upstreamUrl: string;
  workDir: string;
}

export interface ScaleGateway {
  readonly name: string;
  readonly stack: GatewayStack;
  /** The gateway's database (the day files are in the folder beside it). */
  readonly databasePath: string;
  /** The `/logged` service's id. */
  readonly serviceId: string;
  /** `Authorization` header value of the admin API token. */
  readonly authorization: string;
  /** `Cookie` header value of the admin session. */
  readonly adminCookie: string;
  readonly fill: FillResult;
}

/**
 * Prepares the database, fills the access log (in child processes), and starts the gateway;
 * resolves once it routes.
 */
export async function startScaleGateway(options: ScaleGatewayOptions): Promise<ScaleGateway> {
  const workDir = join(options.workDir, options.name);
  mkdirSync(workDir, { recursive: true });
  // gateway-stack.ts keeps the database at <workDir>/<name>.db and seeds its routes into it.
  const databasePath = join(workDir, `${options.name}.db`);
  const { serviceId, authorization } = await prepareDatabase(databasePath, options.upstreamUrl);
  const adminCookie = await createAdminSession(databasePath);
  const fill = await fillAccessLog({ databasePath, serviceId, prefix: LOGGED_PREFIX, records: options.records, days: options.days });
  const stack = await startGatewayStack({ name: options.name, mode: 'embedded', workers: 1, services: 10, upstreamUrl: options.upstreamUrl, workDir });
  return { name: options.name, stack, databasePath, serviceId, authorization, adminCookie, fill };
}

/** Creates the database with the `/logged` service and a `read` API token. */
async function prepareDatabase(databasePath: string, upstreamUrl: string): Promise<{ serviceId: string; authorization: string }> {
  const db = openDatabase(databasePath);
  try {
    const audit = new AuditLog(db);
    const actor = { userId: 'bench-admin', ipAddress: null };
    const service = await new ServiceRegistry(db, audit, new MemoryEventBus()).create(
      { name: 'Access-log scale', path: LOGGED_PREFIX, targetUrl: upstreamUrl, requireAuth: false },
      actor,
    );
    const { secret } = new ApiTokens(db, audit).create({ name: 'bench access-log reads', scope: 'read', expiresInDays: 30 }, actor);
    return { serviceId: service.id, authorization: `Bearer ${secret}` };
  } finally {
    db.close();
  }
}

/** A session of an admin user in the gateway's session store (embedded: its SQLite file); returns the `Cookie` value. */
function createAdminSession(databasePath: string): Promise<string> {
  const config = loadConfig({ DATABASE_PATH: databasePath, OIDC_ISSUER: 'http://127.0.0.1:9/unreachable', OIDC_CLIENT_ID: 'gatehouse-bench', PUBLIC_URL: 'http://127.0.0.1' });
  return createSessionCookie(config, { sub: 'bench-admin', name: 'Bench Admin', email: 'admin@example.com', isAdmin: true, groups: [] });
}
