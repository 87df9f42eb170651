/**
 * Shared setup for the data-plane tests: real upstream servers, and a gateway made of the real
 * proxy plane (with its 'upgrade' listener) and the real embedded dependencies (MemoryEventBus, SqliteSessionStore on a
 * temporary file, MemoryRateLimiter, BatchingAccessLogSink shipping into an array).
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type Dispatcher } from 'undici';
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
import { parseHead, type RawHead } from '../support/raw-connection.js';

export interface Upstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  server: http.Server;
  close(): Promise<void>;
}

/** Starts a real HTTP server on a free port with `handler`. */
export async function startUpstream(handler: RequestListener): Promise<Upstream> {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    server,
    close: () => closeServer(server),
  };
}

/** A TCP server standing in for an upstream that does not speak proper HTTP. */
export interface RawUpstream {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

/**
 * Starts a {@link RawUpstream} that answers every connection's first bytes with `reply` as it is
 * (UTF-8) and closes it: for replies node:http would never write.
 */
export async function rawUpstream(reply: string): Promise<RawUpstream> {
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.end(reply));
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** An upstream that answers every request with {@link echo} and counts them. */
export interface EchoUpstream extends Upstream {
  /** Requests received so far. */
  readonly requests: number;
}

/** Starts an {@link EchoUpstream}: for tests that check what reached the target, and how often. */
export async function startEchoUpstream(): Promise<EchoUpstream> {
  let requests = 0;
  const upstream = await startUpstream((req, res) => {
    requests++;
    echo(req, res);
  });
  return {
    ...upstream,
    get requests() {
      return requests;
    },
  };
}

/** What {@link echo} answers: the request as the upstream saw it. */
export interface Echo {
  method: string;
  url: string;
  /** The raw header list, as `[name, value]` pairs in arrival order. */
  headers: [string, string][];
  bodyBytes: number;
}

/** An upstream handler that reads the whole body and answers 200 with an {@link Echo}. */
export function echo(req: IncomingMessage, res: ServerResponse): void {
  let bodyBytes = 0;
  req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
  req.on('end', () => {
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i]!, req.rawHeaders[i + 1]!]);
    const body = JSON.stringify({ method: req.method ?? '', url: req.url ?? '', headers, bodyBytes } satisfies Echo);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
  });
}

/** Every value of header `name` (any case) in an {@link Echo}. */
export function headerValues(received: Echo, name: string): string[] {
  const wanted = name.toLowerCase();
  return received.headers.filter(([key]) => key.toLowerCase() === wanted).map(([, value]) => value);
}

/** A registry entry with test defaults: public, enabled. */
export function service(fields: Partial<Service> & Pick<Service, 'path' | 'targetUrl'>): Service {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    name: fields.path,
    requireAuth: false,
    description: '',
    enabled: true,
    createdAt: now,
    updatedAt: now,
    ...fields,
  };
}

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
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-proxy-'));
  const db = new Database(join(dir, 'sessions.db'));
  db.exec('CREATE TABLE sessions (key TEXT PRIMARY KEY, data TEXT NOT NULL, expires_at INTEGER NOT NULL)');
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
      rmSync(dir, { recursive: true, force: true });
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

/** A raw HTTP/1.1 exchange over TCP, for requests undici will not send; returns the whole reply. */
export async function rawRequest(port: number, text: string): Promise<RawResponse> {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(text); // not end(): a half-closed client counts as gone for node:http
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  const reply = Buffer.concat(chunks).toString('latin1');
  const blank = reply.indexOf('\r\n\r\n');
  const head = blank === -1 ? reply : reply.slice(0, blank);
  return { ...parseHead(head), body: blank === -1 ? '' : reply.slice(blank + 4) };
}

/** `count` raw header lines with distinct names (`X-Pad-0: 0`, …), so no stack folds them into fewer fields. */
export function headerPadding(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `X-Pad-${i}: ${i}`);
}

/** A response read until the connection closed: its head, then everything after it as it came. */
export interface RawResponse extends RawHead {
  body: string;
}

async function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
