/**
 * One of the two test starters (the other, gateway.ts, starts the whole embedded gateway): a data
 * plane alone, started as production starts it (`startProxyPlane`,
 * over the embedded backends on the real migrations in an in-memory SQLite database), its
 * access-log records shipped into an array, its identity-assertion keys from the admin plane's
 * own key store in that database, and gateway-owned paths answered by a stand-in admin plane.
 */
import { sampleSession } from './samples.js';
import { EventEmitter, once } from 'node:events';
import { TEST_ENV } from './test-env.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import { AssertionKeys } from '../../admin/credentials/assertion-keys.js';
import { AuditLog } from '../../admin/audit-log.js';
import { openDatabase, type Database } from '../../admin/database.js';
import { GatewayMetrics } from '../../proxy/pipeline/gateway-metrics.js';
import { startProxyPlane } from '../../proxy/process/start-proxy-plane.js';
import type { UpgradeHandler } from '../../proxy/pipeline/upgrade.js';
import { recordsOf, type AccessLogBatch } from '../../shared/backends/access-log-batch.js';
import { openEmbeddedBackends } from '../../shared/backends/embedded/embedded-backends.js';
import { loadConfig, type Config } from '../../shared/config/config.js';
import { createLogger } from '../../shared/logger.js';
import { closeAllConnections } from '../../shared/http/http-server.js';
import type { AccessLogEntry, Service, SessionUser } from '../../shared/types.js';

export interface DataPlaneOptions {
  /** Environment for loadConfig, over {@link TEST_ENV} (rate limits off, no logs). */
  env?: Record<string, string>;
  services?: Service[];
  /** Replaces the stand-in admin plane (which answers 200 `{"plane":"admin","url":…}`). */
  adminPlane?: (req: IncomingMessage, res: ServerResponse) => void;
  /** False: no assertion key set is published (as a proxy before the admin plane's first). */
  assertionKeys?: boolean;
}

export interface TestDataPlane {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  config: Config;
  /** The in-memory SQLite database holding the sessions and the assertion keys. */
  db: Database;
  /** The identity assertion's keys, started (published) unless `assertionKeys: false`. */
  assertionKeys: AssertionKeys;
  /** The public listener's upgraded connections (WebSocket tunnels). */
  upgrades: UpgradeHandler;
  /** Request-targets the stand-in admin plane received. */
  adminRequests: string[];
  /** Access-log records shipped so far. */
  records: AccessLogEntry[];
  /** Its metrics (`metrics.registry.metrics()` is what its `/metrics` would serve). */
  metrics: GatewayMetrics;
  publish(services: Service[]): Promise<void>;
  /**
   * Creates a session for `user` and returns the Cookie header value that carries it; with `host`,
   * the value a service host's cookie carries (a host session linked to it, design.md §4.16).
   */
  signIn(user?: Partial<SessionUser>, options?: { host?: string }): Promise<string>;
  /** Resolves once at least `count` records were shipped (the sink ships every millisecond). */
  waitForRecords(count: number): Promise<AccessLogEntry[]>;
  /** Resolves with the first shipped record that `matches`, waiting for it when needed. */
  waitForRecord(matches: (record: AccessLogEntry) => boolean): Promise<AccessLogEntry>;
  /** A request through the gateway with a client of its own; the body is read as text. */
  fetch(target: string, options?: ClientOptions): Promise<ClientResponse>;
  /** Stops it, shipping every record first (rate-limit summaries included); a second call waits for the first. */
  close(): Promise<void>;
}

export interface ClientOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string | string[]>;
  body?: string | Buffer | NodeJS.ReadableStream;
}

export interface ClientResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json<T = unknown>(): T;
}

export const TEST_USER: SessionUser = { sub: 'user-123', name: 'Ada Lovelace', email: 'ada@example.com', isAdmin: false };

/**
 * Starts a data plane on a free port with `startProxyPlane`, as the processes do, with the
 * services published when given.
 */
export async function startDataPlane(options: DataPlaneOptions = {}): Promise<TestDataPlane> {
  const config = loadConfig({ PORT: '0', ...TEST_ENV, ...options.env });
  const logger = createLogger(config.logLevel, 'proxy-test');
  const db = openDatabase(':memory:');
  const records: AccessLogEntry[] = [];
  const shipped = new EventEmitter();
  const storeAccessLogs = (batch: AccessLogBatch) => {
    records.push(...recordsOf(batch));
    shipped.emit('batch');
  };
  const backends = openEmbeddedBackends(config, { db, storeAccessLogs }, logger, { accessLog: { intervalMs: 1 } });
  const adminRequests: string[] = [];
  const metrics = new GatewayMetrics(backends.accessLogSink());
  const plane = await startProxyPlane({
    config,
    backends,
    adminPlane: options.adminPlane ?? standInAdminPlane(adminRequests),
    metrics,
    logger,
  });
  const assertionKeys = new AssertionKeys(db, new AuditLog(db), backends.bus, config, logger);
  if (options.assertionKeys !== false) await assertionKeys.start();
  if (options.services) await backends.bus.publishRegistry(options.services);
  const origin = `http://127.0.0.1:${plane.port}`;
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  let closing: Promise<void> | undefined;

  return {
    origin,
    port: plane.port,
    config,
    db,
    assertionKeys,
    upgrades: plane.server.upgrades,
    adminRequests,
    records,
    metrics,
    publish: (services) => backends.bus.publishRegistry(services),
    async signIn(user = {}, options = {}) {
      const session = sampleSession({ user: { ...TEST_USER, ...user }, csrfToken: 'csrf-token-value', idToken: null });
      const id = await backends.sessions.create(session);
      const link = options.host === undefined ? id : await backends.sessions.link(session.handle, options.host, 'host-csrf-token');
      return `gw_session=${link}`;
    },
    async waitForRecords(count) {
      while (records.length < count) await once(shipped, 'batch');
      return records;
    },
    async waitForRecord(matches) {
      for (;;) {
        const found = records.find(matches);
        if (found) return found;
        await once(shipped, 'batch');
      }
    },
    fetch: (target, clientOptions) => send(agent, origin, target, clientOptions),
    close: () => (closing ??= (async () => {
      await agent.close();
      closeAllConnections(plane.server.server); // a test's unfinished requests are not waited for
      await plane.close();
      assertionKeys.close();
      await backends.close();
      db.close();
    })()),
  };
}

function standInAdminPlane(seen: string[]): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    seen.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ plane: 'admin', url: req.url }));
  };
}

async function send(agent: Agent, origin: string, target: string, options: ClientOptions = {}): Promise<ClientResponse> {
  // Dispatcher.request sends `path` as it is; request(url) would resolve dot segments first.
  const response = await agent.request({
    origin,
    path: target,
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body as string | Buffer | undefined,
  });
  const text = await response.body.text();
  return {
    status: response.statusCode,
    headers: response.headers,
    text,
    json: <T>() => JSON.parse(text) as T,
  };
}
