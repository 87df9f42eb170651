import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { AuditLog } from '../admin/audit-log.js';
import { openDatabase } from '../admin/database.js';
import { ServiceRegistry } from '../admin/service-registry.js';
import { MemoryEventBus } from '../shared/embedded/memory-event-bus.js';
import { startEchoUpstream, type EchoUpstream } from './fixtures/upstream.js';
import { freePort } from './support/free-port.js';

const MAIN = new URL('../shared/main.js', import.meta.url).pathname;
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

test('SIGTERM right after traffic: every access-log record is stored, exit code 0', async () => {
  const databasePath = join(dir, 'gateway.db');
  const db = openDatabase(databasePath);
  const registry = new ServiceRegistry(db, new AuditLog(db), new MemoryEventBus());
  const service = await registry.create({ name: 'Echo', path: '/echo', targetUrl: upstream.url, requireAuth: false }, { userId: 'test', ipAddress: null });
  db.close();

  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: String(port),
      ADMIN_PORT: '0',
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      DATABASE_PATH: databasePath,
      OIDC_ISSUER: 'http://127.0.0.1:9/unreachable',
      OIDC_CLIENT_ID: 'test',
      RATE_LIMIT_GENERAL: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await waitForLine(child.stdout!, /gatehouse listening/);

  const statuses = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      const response = await request(`http://127.0.0.1:${port}/echo/item/${i}`);
      await response.body.dump();
      return response.statusCode;
    }),
  );
  assert.ok(statuses.every((status) => status === 200));
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);

  const stored = openDatabase(databasePath);
  const rows = stored.prepare('SELECT count(*) AS n, count(DISTINCT path) AS paths FROM access_logs WHERE service_id = ?').get(service.id) as { n: number; paths: number };
  stored.close();
  assert.equal(rows.n, REQUESTS);
  assert.equal(rows.paths, REQUESTS);
});

/** Resolves when the child's output matches; keeps draining it afterwards so the child never blocks. */
function waitForLine(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    stream.on('data', (chunk) => {
      seen += String(chunk);
      if (pattern.test(seen)) resolve();
    });
    stream.once('end', () => reject(new Error(`output ended before ${pattern}: ${seen}`)));
  });
}
