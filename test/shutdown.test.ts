import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { AccessLogReader } from '../admin/access-log/reading/access-log-reader.js';
import { accessLogDirOf } from '../admin/access-log/day-files.js';
import { AuditLog } from '../admin/audit-log.js';
import { openDatabase } from '../admin/database.js';
import { ServiceRegistry } from '../admin/registry/service-registry.js';
import { MemoryEventBus } from '../shared/backends/embedded/memory-event-bus.js';
import { STOP_DEADLINE_MS } from '../shared/graceful-stop.js';
import { eventually } from './support/eventually.js';
import { freePort } from './support/free-port.js';
import { statusOf } from './support/gatehouse-process.js';
import { startRedis } from './support/redis.js';
import { startEchoUpstream, type EchoUpstream } from './support/upstream.js';

const MAIN = new URL('../admin/process/embedded-main.js', import.meta.url).pathname;
const REQUESTS = 300;

let dir: string;
let upstream: EchoUpstream;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-shutdown-'));
  upstream = await startEchoUpstream();
});
after(async () => {
  await upstream.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Registers `/echo` → the echo upstream in a new database at `databasePath`; resolves with its id. */
async function registerEcho(databasePath: string): Promise<string> {
  const db = openDatabase(databasePath);
  const registry = new ServiceRegistry(db, new AuditLog(db), new MemoryEventBus());
  const service = await registry.create({ name: 'Echo', path: '/echo', targetUrl: upstream.origin, requireAuth: false }, { userId: 'test', ipAddress: null });
  db.close();
  return service.id;
}

/** `npm start` on `databasePath` with `env` on top, at info level; resolves once it listens. */
async function startEmbedded(databasePath: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; port: number; adminPort: number; output(): string }> {
  const [port, adminPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_PATH: databasePath,
      OIDC_ISSUER: 'http://127.0.0.1:9/unreachable',
      OIDC_CLIENT_ID: 'test',
      RATE_LIMIT_GENERAL: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const output = await waitForLine(child.stdout!, /gatehouse listening/);
  return { child, port, adminPort, output };
}

test('SIGTERM right after traffic: every access-log record is stored, exit code 0', async () => {
  const databasePath = join(dir, 'gateway.db');
  const serviceId = await registerEcho(databasePath);
  const { child, port } = await startEmbedded(databasePath);

  const statuses = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => statusOf(`http://127.0.0.1:${port}/echo/item/${i}`)));
  assert.ok(statuses.every((status) => status === 200));
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);

  const { total, paths } = storedRecords(databasePath, serviceId);
  assert.equal(total, REQUESTS);
  assert.equal(paths.length, REQUESTS);
  assert.equal(new Set(paths).size, REQUESTS, 'no record stored twice');
});

test('REDIS_URL set and Redis killed: SIGTERM still exits 0 within the bound, saying how many access-log records were dropped', async (t) => {
  const redis = await startRedis();
  try {
    const databasePath = join(dir, 'with-redis.db');
    await registerEcho(databasePath);
    const gateway = await startEmbedded(databasePath, { REDIS_URL: redis.url });
    const base = `http://127.0.0.1:${gateway.port}`;
    await eventually('the route', async () => (await statusOf(`${base}/echo/`)) === 200);
    await eventually('its record shipped', async () => /gatehouse_access_log_records_shipped_total 1\n/.test(await (await request(`http://127.0.0.1:${gateway.adminPort}/metrics`)).body.text()));
    await redis.kill();
    for (let i = 0; i < 7; i++) assert.equal(await statusOf(`${base}/echo/while-gone-${i}`), 200);

    const started = Date.now();
    gateway.child.kill('SIGTERM');
    const [code] = (await once(gateway.child, 'exit')) as [number | null];
    const ms = Date.now() - started;
    t.diagnostic(`embedded gateway stopped in ${ms} ms`);
    assert.equal(code, 0);
    assert.ok(ms < STOP_DEADLINE_MS, `stopped in ${ms} ms`);
    assert.match(gateway.output(), /access log closed; 7 access-log records were dropped/);
  } finally {
    await redis.stop();
  }
});

/**
 * What the stopped gateway at `databasePath` stored of `serviceId`'s access log, read from its day
 * files: the API's total and the path of every record (paged through, newest first).
 */
function storedRecords(databasePath: string, serviceId: string): { total: number; paths: string[] } {
  const reader = new AccessLogReader(accessLogDirOf(databasePath));
  try {
    const paths: string[] = [];
    let total = 0;
    for (;;) {
      const page = reader.listForService(serviceId, 1000, paths.length);
      total = page.total;
      if (page.logs.length === 0) break;
      paths.push(...page.logs.map((log) => log.path));
    }
    return { total, paths };
  } finally {
    reader.close();
  }
}

/**
 * Resolves when the child's output matches, with a function returning all of it so far; keeps
 * draining it afterwards so the child never blocks.
 */
function waitForLine(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<() => string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    stream.on('data', (chunk) => {
      seen += String(chunk);
      if (pattern.test(seen)) resolve(() => seen);
    });
    stream.once('end', () => reject(new Error(`output ended before ${pattern}: ${seen}`)));
  });
}
