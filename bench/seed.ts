/**
 * The data a gateway under test starts with: its registry (the three routes the benchmark drives
 * plus filler services up to a given count) and a logged-in session, written before its
 * processes start, through the same code the processes use.
 */
import { randomUUID } from 'node:crypto';
import { sampleSession } from '../test/support/samples.js';
import { AuditLog } from '../admin/audit-log.js';
import { openDatabase } from '../admin/database.js';
import { openAdminStorage } from '../admin/process/admin-storage.js';
import { ServiceRegistry } from '../admin/registry/service-registry.js';
import type { Config } from '../shared/config/config.js';
import { gatewayCookieNames } from '../shared/http/cookies.js';
import { MemoryEventBus } from '../shared/backends/embedded/memory-event-bus.js';
import { createLogger } from '../shared/logger.js';
import { openBackends } from '../shared/backends/open-backends.js';
import type { Service, SessionUser } from '../shared/types.js';

/** The services the benchmark sends traffic to. */
export interface BenchRoutes {
  /** `/public`: no sign-in required. */
  publicService: Service;
  /** `/protected`: a session required. */
  protectedService: Service;
  /** `/protected-policy`: a session required, and {@link BENCH_POLICY} (design.md §4.7). */
  policyService: Service;
  /** `/protected-rules`: as `/protected`, with {@link BENCH_RULES} (design.md §4.18), none of which matches the bench's path. */
  rulesService: Service;
  /** `/pool`: as `/public`, but a pool of three targets balanced round robin, when the stack has one. */
  poolService?: Service;
  /** `/grpc`: public, its target a gRPC server over h2c (`h2c://…`), when the stack has one. */
  grpcService?: Service;
}

/** The groups of the benchmark's session user; the last one is the one {@link BENCH_POLICY} allows. */
const BENCH_USER_GROUPS = ['bench-readers', 'bench-writers', 'bench-users'];

/**
 * An access policy the benchmark's user passes only by its group, the last rule checked (subjects,
 * then emails and domains, then groups: shared/services/access-policy.ts), and by the last of its groups:
 * the most work a policy's check does for a caller it allows.
 */
const BENCH_POLICY = {
  subjects: ['someone-else', 'another-one', 'a-third'],
  emails: ['ops@example.org', 'dev@example.org', 'bench@example.net'],
  emailDomains: ['example.org', 'example.net'],
  groups: ['bench-admins', 'bench-users'],
};

/**
 * 16 rules (design.md §4.18) that the bench's request (`/protected-rules/bench`, GET) meets none
 * of, after comparing every one: no methods (so no rule is passed over by its method), and each
 * rule's two paths start with the request's own segment (`/bench`, or `*`), so each path compares
 * a segment before it fails. The most work the rules do for a request the service's own settings
 * then decide. A rule that matched would stop earlier.
 */
export const BENCH_RULES = Array.from({ length: 16 }, (_, n) => ({
  paths: [`/bench/internal-${n}`, `/*/admin-${n}`],
  action: n % 2 === 0 ? ('deny' as const) : ('public' as const),
}));

/** How many services {@link BenchRoutes} has. */
const ROUTED_SERVICES = 4;

/** Every filler service lives under its own two-segment path, so both registries have the same depth. */
const FILLER_DEPTH_PATH = (index: number) => `/team-${index % 100}/svc-${index}`;

/**
 * Creates the gateway's SQLite file at `databasePath` (migrated) with `/public`, `/protected`,
 * `/protected-policy` and `/protected-rules`, all pointing at `upstreamUrl`, with `poolUrls` `/pool` balancing over
 * them, with `grpcTargetUrl` `/grpc` (public) in front of that gRPC server, plus filler services
 * (enabled, public, at `/team-<n>/svc-<i>`, target `<upstreamUrl>/filler/<i>`) so that
 * `totalServices` are registered.
 *
 * The two routed services go through {@link ServiceRegistry.create} (validation, audit). Fillers
 * are inserted in one transaction with the same columns: `create` publishes the whole registry
 * after every insert, which for 10,000 services is 10,000 full-table reads (minutes).
 */
export async function seedRegistry(databasePath: string, upstreamUrl: string, totalServices: number, poolUrls?: string[], grpcTargetUrl?: string): Promise<BenchRoutes> {
  if (totalServices < ROUTED_SERVICES) throw new Error(`the benchmark needs at least its ${ROUTED_SERVICES} routed services`);
  const db = openDatabase(databasePath);
  try {
    const registry = new ServiceRegistry(db, new AuditLog(db), new MemoryEventBus());
    const actor = { userId: 'bench-seed', ipAddress: null };
    const publicService = await registry.create({ name: 'Bench public', path: '/public', targetUrl: upstreamUrl, requireAuth: false }, actor);
    const protectedService = await registry.create({ name: 'Bench protected', path: '/protected', targetUrl: upstreamUrl, requireAuth: true }, actor);
    const policyService = await registry.create(
      { name: 'Bench protected, policy', path: '/protected-policy', targetUrl: upstreamUrl, requireAuth: true, access: BENCH_POLICY },
      actor,
    );
    const rulesService = await registry.create(
      { name: 'Bench protected, rules', path: '/protected-rules', targetUrl: upstreamUrl, requireAuth: true, rules: BENCH_RULES },
      actor,
    );
    const poolService = poolUrls
      ? await registry.create({ name: 'Bench pool', path: '/pool', targets: poolUrls.map((url) => ({ url, weight: 1 })), requireAuth: false }, actor)
      : undefined;
    // A gRPC method path is /<service>/<method>: the target url's empty base puts /grpc/gatehouse.test.Echo/Unary at /gatehouse.test.Echo/Unary.
    const grpcService = grpcTargetUrl
      ? await registry.create({ name: 'Bench gRPC', path: '/grpc', targetUrl: grpcTargetUrl, requireAuth: false }, actor)
      : undefined;
    const routed = ROUTED_SERVICES + (poolService ? 1 : 0) + (grpcService ? 1 : 0);
    const insert = db.prepare(
      `INSERT INTO services (id, name, path, target_url, require_auth, description, enabled, created_at, updated_at)
       VALUES (?, ?, ?, ?, 0, '', 1, ?, ?)`,
    );
    const now = new Date().toISOString();
    db.transaction(() => {
      for (let i = 0; i < totalServices - routed; i++) {
        insert.run(randomUUID(), `Filler ${i}`, FILLER_DEPTH_PATH(i), `${upstreamUrl}/filler/${i}`, now, now);
      }
    })();
    return { publicService, protectedService, policyService, rulesService, poolService, grpcService };
  } finally {
    db.close();
  }
}

/** The bench's signed-in user (not an admin), in the groups the policy service allows. */
const BENCH_USER: SessionUser = { sub: 'bench-user', name: 'Bench User', email: 'bench@example.com', isAdmin: false, groups: BENCH_USER_GROUPS };

/**
 * Creates a session for `user` (the bench's non-admin user by default) in the store the gateway's
 * processes will use, opened like they open it: SQLite through `openAdminStorage` in embedded mode,
 * Redis through `openBackends` with REDIS_URL (as a proxy does: no access-log consumer joins the stream).
 * @returns the `Cookie` header value that carries it.
 */
export async function createSessionCookie(config: Config, user: SessionUser = BENCH_USER): Promise<string> {
  const logger = createLogger('warn', 'gatehouse-bench');
  const storage = config.redis ? undefined : await openAdminStorage(config, logger);
  const backends = storage?.backends ?? (await openBackends(config, logger));
  try {
    const id = await backends.sessions.create(sampleSession({ user, idToken: null, expiresAt: Date.now() + config.sessionTtlMs }));
    return `${gatewayCookieNames(config.publicUrl).session}=${id}`;
  } finally {
    await (storage ?? backends).close();
  }
}
