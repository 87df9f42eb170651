/**
 * A gateway deployment under test, in child processes, with its own SQLite file:
 * - `embedded`: one `node dist/admin/process/embedded-main.js` (both planes; sessions in SQLite,
 *   rate limits in memory, access logs straight to SQLite);
 * - `split`: a `redis-server` (test/support/redis.ts), `node dist/admin/process/main.js` and
 *   `node dist/proxy/process/main.js` with PROXY_WORKERS workers, as the Procfile runs them.
 * Either way: the general rate limiter on at a limit no run can reach, access logging on, and the
 * registry and a session seeded before start (seed.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { loadConfig } from '../shared/config/config.js';
import { createLogger } from '../shared/logger.js';
import { openBackends } from '../shared/backends/open-backends.js';
import { startRedis, type RedisServer } from '../test/support/redis.js';
import { freePort } from '../test/support/free-port.js';
import { countStoredAccessLogs, waitForStoredAccessLogs } from './access-log/access-log-store-count.js';
import { spawnNode, waitUntil, type NodeChild } from './processes.js';
import { createSessionCookie, seedRegistry, type BenchRoutes } from './seed.js';
import type { BenchCertificate } from './tls-certificate.js';

export type StackMode = 'embedded' | 'split';

/** The general limit: far above what any run can send from one client address in 15 minutes. */
export const UNREACHABLE_RATE_LIMIT = '100000000/15m';

export interface StackOptions {
  /** Name used for log files, e.g. `gateway-split-2w`. */
  name: string;
  mode: StackMode;
  /** Proxy workers (split mode); embedded mode has exactly 1. */
  workers: number;
  /** Services registered, the two routed ones included. */
  services: number;
  upstreamUrl: string;
  /** The targets of a `/pool` service to register too (seed.ts), when given. */
  poolUrls?: string[];
  /** A gRPC server (`h2c://…`) for a public `/grpc` service to register too (seed.ts), when given. */
  grpcTargetUrl?: string;
  /** Folder for the database and log files. */
  workDir: string;
  /** Extra `node` flags for the data-plane process (cluster workers inherit them), e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /** Extra `node` flags for the admin process (split mode). */
  adminNodeArgs?: string[];
  /** Extra environment for every gateway process, over the stack's own (for experiments). */
  env?: Record<string, string>;
  /**
   * A self-signed certificate (tls-certificate.ts): PORT then speaks HTTPS with it
   * (TLS_CERT_FILE/TLS_KEY_FILE, PUBLIC_URL https), and the readiness probe trusts it.
   */
  tls?: BenchCertificate;
}

export interface GatewayStack {
  readonly name: string;
  readonly mode: StackMode;
  readonly workers: number;
  readonly services: number;
  /** The public listener, e.g. `http://127.0.0.1:PORT` (`https://` with `tls`). */
  readonly origin: string;
  readonly routes: BenchRoutes;
  /** `Cookie` header value of a logged-in session. */
  readonly cookie: string;
  /** Requests to `/public/` answered while waiting for the stack to route (each has an access-log record). */
  readonly probeResponses: number;
  /** The process whose tree is the data plane: the embedded gateway, the proxy (PROXY_WORKERS=1), or the proxy primary (its workers are its children). */
  readonly proxyPid: number;
  /**
   * The gateway's own count of finished requests per service id (`gatehouse_requests_total`,
   * summed over status classes and workers), from its /metrics.
   */
  servedByService(): Promise<Map<string, number>>;
  /** `process_resident_memory_bytes` from the data plane's /metrics, in bytes (a cluster: the workers' sum, primary excluded). */
  metricsRssBytes(): Promise<number | undefined>;
  /**
   * Stops the data plane (workers ship their buffered records), waits until the admin has stored
   * what it received, stops the rest, and returns the access-log records stored per service id.
   */
  stop(): Promise<Map<string, number>>;
}

const UNREACHABLE_ISSUER = 'http://127.0.0.1:9/unreachable';

/** Starts a stack and resolves once `/public/` answers 200 through it. */
export async function startGatewayStack(options: StackOptions): Promise<GatewayStack> {
  const port = await freePort();
  const adminPort = await freePort();
  const internalPort = await freePort();
  const databasePath = join(options.workDir, `${options.name}.db`);
  const redis = options.mode === 'split' ? await startRedis() : undefined;
  const origin = `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    INTERNAL_PORT: String(internalPort),
    PUBLIC_URL: origin,
    ADMIN_INTERNAL_URL: `http://127.0.0.1:${adminPort}`,
    DATABASE_PATH: databasePath,
    OIDC_ISSUER: UNREACHABLE_ISSUER,
    OIDC_CLIENT_ID: 'gatehouse-bench',
    RATE_LIMIT_GENERAL: UNREACHABLE_RATE_LIMIT,
    LOG_LEVEL: 'info',
    PROXY_WORKERS: String(options.mode === 'split' ? options.workers : 1),
    ...(redis ? { REDIS_URL: redis.url } : {}),
    ...(options.tls ? { TLS_CERT_FILE: options.tls.certFile, TLS_KEY_FILE: options.tls.keyFile } : {}),
    ...options.env,
  };
  const routes = await seedRegistry(databasePath, options.upstreamUrl, options.services, options.poolUrls, options.grpcTargetUrl);
  const cookie = await createSessionCookie(loadConfig(env));
  const processes = options.mode === 'split'
    ? await startSplit(options, env, internalPort)
    : await startEmbedded(options, env);
  let probeResponses = 0;
  const probe = options.tls ? new Agent({ connect: { ca: readFileSync(options.tls.certFile) } }) : undefined;
  await waitUntil(`${options.name} to route /public/`, async () => {
    const answer = await status(`${origin}/public/`, probe);
    if (answer === 200) probeResponses++;
    return answer === 200;
  });
  await probe?.close();

  const metricsUrl = options.mode === 'split' ? `http://127.0.0.1:${internalPort}/metrics` : `http://127.0.0.1:${adminPort}/metrics`;
  return {
    name: options.name,
    mode: options.mode,
    workers: options.mode === 'split' ? options.workers : 1,
    services: options.services,
    origin,
    routes,
    cookie,
    probeResponses,
    proxyPid: processes.proxy.pid,
    servedByService: async () => requestsByService(await text(metricsUrl)),
    metricsRssBytes: async () => gaugeValue(await text(metricsUrl), 'process_resident_memory_bytes'),
    async stop() {
      await processes.proxy.stop();
      if (processes.admin) {
        await waitForStoredAccessLogs(databasePath);
        await processes.admin.stop();
      }
      await redis?.stop();
      return countStoredAccessLogs(databasePath);
    },
  };
}

async function startEmbedded(options: StackOptions, env: Record<string, string>): Promise<{ proxy: NodeChild; admin?: NodeChild }> {
  const proxy = await spawnNode(options.name, 'admin/process/embedded-main.js', { env, logDir: options.workDir, readyLine: /gatehouse listening/, nodeArgs: options.nodeArgs ?? [] });
  return { proxy };
}

async function startSplit(options: StackOptions, env: Record<string, string>, internalPort: number): Promise<{ proxy: NodeChild; admin: NodeChild }> {
  const admin = await spawnNode(`${options.name}-admin`, 'admin/process/main.js', { env, logDir: options.workDir, readyLine: /gatehouse admin listening/, nodeArgs: options.adminNodeArgs ?? [] });
  const proxy = await spawnNode(`${options.name}-proxy`, 'proxy/process/main.js', { env, logDir: options.workDir, nodeArgs: options.nodeArgs ?? [] });
  await waitUntil(`${options.name} proxy /readyz`, async () => (await status(`http://127.0.0.1:${internalPort}/readyz`)) === 200);
  return { proxy, admin };
}

async function status(url: string, dispatcher?: Dispatcher): Promise<number> {
  const response = await request(url, dispatcher ? { dispatcher } : {});
  await response.body.dump();
  return response.statusCode;
}

async function text(url: string): Promise<string> {
  const response = await request(url);
  if (response.statusCode !== 200) {
    await response.body.dump();
    throw new Error(`GET ${url}: ${response.statusCode}`);
  }
  return response.body.text();
}

/** Sums `gatehouse_requests_total` samples by their `service` label. */
function requestsByService(exposition: string): Map<string, number> {
  const served = new Map<string, number>();
  for (const match of exposition.matchAll(/^gatehouse_requests_total\{([^}]*)\}\s+(\S+)$/gm)) {
    const service = /service="([^"]*)"/.exec(match[1]!)?.[1];
    if (service !== undefined) served.set(service, (served.get(service) ?? 0) + Number(match[2]));
  }
  return served;
}

/** The value of an unlabelled gauge, or undefined when absent. */
function gaugeValue(exposition: string, name: string): number | undefined {
  const match = new RegExp(`^${name}\\s+(\\S+)$`, 'm').exec(exposition);
  return match ? Number(match[1]) : undefined;
}

/**
 * Whether split mode can run here: `openBackends` accepts REDIS_URL (the Redis backends are
 * wired). Tried against a throwaway redis-server.
 * @returns `available`, and the reason when not.
 */
export async function splitModeAvailability(workDir: string): Promise<{ available: boolean; reason: string }> {
  let redis: RedisServer | undefined;
  try {
    redis = await startRedis();
    const config = loadConfig({
      REDIS_URL: redis.url,
      DATABASE_PATH: join(workDir, 'probe.db'),
      OIDC_ISSUER: UNREACHABLE_ISSUER,
      OIDC_CLIENT_ID: 'gatehouse-bench',
    });
    const backends = await openBackends(config, createLogger('silent', 'gatehouse-bench'));
    await backends.close();
    return { available: true, reason: 'Redis backends available' };
  } catch (error) {
    return { available: false, reason: error instanceof Error ? error.message : String(error) };
  } finally {
    await redis?.stop();
  }
}
