/**
 * The data-plane tests' gateway: the real proxy plane (with its 'upgrade' listener) and the real
 * embedded dependencies (MemoryEventBus, SqliteSessionStore on a migrated in-memory database,
 * MemoryRateLimiter, BatchingAccessLogSink shipping into an array).
 */
import type Database from 'better-sqlite3';
import { EventEmitter, once } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, type Dispatcher } from 'undici';
import { openDatabase } from '../../admin/database.js';
import { createProxyPlane, type ProxyPlane } from '../../proxy/proxy-plane.js';
import { createUpgradeHandler, type UpgradeHandler } from '../../proxy/upgrade.js';
import { BatchingAccessLogSink } from '../../shared/batching-access-log-sink.js';
import { clientIpResolver } from '../../shared/client-ip.js';
import { loadConfig, type Config } from '../../shared/config.js';
import { MemoryEventBus } from '../../shared/embedded/memory-event-bus.js';
import { MemoryRateLimiter } from '../../shared/embedded/memory-rate-limiter.js';
import { SqliteSessionStore } from '../../shared/embedded/sqlite-session-store.js';
import { createLogger } from '../../shared/logger.js';
import { GatewayMetrics } from '../../shared/metrics.js';
import type { AccessLogEntry, Service, SessionUser } from '../../shared/types.js';
import { closeServer } from '../support/listen.js';

export interface GatewayOptions {
  /** Environment for loadConfig; RATE_LIMIT_GENERAL defaults to `0` (off) here. */
  env?: Record<string, string>;
  services?: Service[];
  /** Replaces the stand-in admin plane (which answers 200 `{"plane":"admin","url":…}`). */
  adminPlane?: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface TestGateway {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  config: Config;
  bus: MemoryEventBus;
  db: Database.Database;
  plane: ProxyPlane;
  upgrades: UpgradeHandler;
  /** Request-targets the stand-in admin plane received. */
  adminRequests: string[];
  /** Access-log records shipped so far. */
  records: AccessLogEntry[];
  publish(services: Service[]): Promise<void>;
  /** Creates a session for `user` and returns the Cookie header value that carries it. */
  signIn(user?: Partial<SessionUser>): Promise<string>;
  /** Resolves once at least `count` records were shipped (the sink ships every millisecond). */
  waitForRecords(count: number): Promise<AccessLogEntry[]>;
  /** Resolves with the first shipped record that `matches`, waiting for it when needed. */
  waitForRecord(matches: (record: AccessLogEntry) => boolean): Promise<AccessLogEntry>;
  /** A request through the gateway with a client of its own; the body is read as text. */
  fetch(target: string, options?: ClientOptions): Promise<ClientResponse>;
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

/** Starts a gateway on a free port, with the services published when given. */
export async function startGateway(options: GatewayOptions = {}): Promise<TestGateway> {
  const config = loadConfig({ RATE_LIMIT_GENERAL: '0', LOG_LEVEL: 'silent', ...options.env });
  const db = openDatabase(':memory:');
  const sessions = new SqliteSessionStore(db);
  const records: AccessLogEntry[] = [];
  const shipped = new EventEmitter();
  const accessLog = new BatchingAccessLogSink(
    (batch) => {
      records.push(...batch);
      shipped.emit('batch');
    },
    { intervalMs: 1 },
  );
  const bus = new MemoryEventBus();
  const adminRequests: string[] = [];
  const plane = createProxyPlane({
    config,
    bus,
    sessions,
    accessLog,
    generalLimiter: new MemoryRateLimiter(config.rateLimitGeneral),
    clientIp: clientIpResolver(config.trustProxy),
    adminPlane: options.adminPlane ?? standInAdminPlane(adminRequests),
    upstreamFailures: new GatewayMetrics(),
    logger: createLogger(config.logLevel, 'proxy-test'),
  });
  if (options.services) await bus.publishRegistry(options.services);
  const server = http.createServer(plane.handle);
  const upgrades = createUpgradeHandler(plane, server);
  server.on('checkContinue', plane.handleContinue);
  server.on('upgrade', upgrades.handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const agent = new Agent({ keepAliveTimeout: 1_000 });

  return {
    origin,
    port,
    config,
    bus,
    db,
    plane,
    upgrades,
    adminRequests,
    records,
    publish: (services) => bus.publishRegistry(services),
    async signIn(user = {}) {
      const now = Date.now();
      const id = await sessions.create({
        user: { ...TEST_USER, ...user },
        csrfToken: 'csrf-token-value',
        idToken: null,
        createdAt: now,
        expiresAt: now + 3_600_000,
      });
      return `gw_session=${id}`;
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
    async close() {
      await agent.close();
      upgrades.closeAll();
      server.closeAllConnections();
      await closeServer(server);
      await plane.close();
      await accessLog.close();
      await sessions.close();
      await bus.close();
      db.close();
    },
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
