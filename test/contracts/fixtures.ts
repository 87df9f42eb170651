/** Test data and small helpers shared by the contract suites (not a test file itself). */
import { randomUUID } from 'node:crypto';
import { newCsrfToken } from '../../shared/secrets.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach } from 'node:test';
import { Redis } from 'ioredis';
import { AccessLogStore } from '../../admin/access-log-store.js';
import { openDatabase, type Database } from '../../admin/database.js';
import type { AccessLogEntry, Service, Session } from '../../shared/types.js';
import { startRedis, type RedisServer } from '../support/redis.js';

/** A live session (expires in an hour unless overridden). */
export function sampleSession(overrides: Partial<Session> = {}): Session {
  const now = Date.now();
  return {
    user: { sub: `sub-${randomUUID()}`, name: 'Grace Hopper', email: 'grace@example.com', isAdmin: false },
    csrfToken: newCsrfToken(),
    idToken: 'header.payload.signature',
    createdAt: now,
    expiresAt: now + 3_600_000,
    ...overrides,
  };
}

/** A registry entry named after `n`. */
export function sampleService(n: number, overrides: Partial<Service> = {}): Service {
  const at = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    name: `Service ${n}`,
    path: `/svc-${n}`,
    targetUrl: `http://127.0.0.1:${10_000 + n}/base`,
    requireAuth: n % 2 === 0,
    description: '',
    enabled: true,
    createdAt: at,
    updatedAt: at,
    ...overrides,
  };
}

export const LOG_SERVICE = '11111111-1111-4111-8111-111111111111';

/** An access-log record for request `n` of {@link LOG_SERVICE}, with a fresh event id. */
export function sampleEntry(n: number, overrides: Partial<AccessLogEntry> = {}): AccessLogEntry {
  return {
    eventId: randomUUID(),
    serviceId: LOG_SERVICE,
    userId: n % 3 === 0 ? null : `user-${n}`,
    path: `/svc/items/${n}?q=${n}`,
    method: n % 2 === 0 ? 'GET' : 'POST',
    statusCode: 200 + (n % 5),
    responseTimeMs: n % 100,
    ipAddress: '198.51.100.7',
    timestamp: Date.UTC(2025, 0, 1) + n,
    ...overrides,
  };
}

/** A migrated SQLite file in a temporary folder, with the admin's access-log store over it. */
export interface TempDatabase {
  db: Database;
  accessLogs: AccessLogStore;
  /** Paths of every stored record of {@link LOG_SERVICE}, oldest first. */
  storedPaths(): string[];
  close(): void;
}

export function tempDatabase(): TempDatabase {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-contract-'));
  const db = openDatabase(join(dir, 'gateway.db'));
  const accessLogs = new AccessLogStore(db);
  const select = db.prepare<[string], { path: string }>('SELECT path FROM access_logs WHERE service_id = ? ORDER BY id');
  return {
    db,
    accessLogs,
    storedPaths: () => select.all(LOG_SERVICE).map((row) => row.path),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Polls `condition` every 10 ms until it holds; for conditions no event announces (a pub/sub
 * message reaching another connection). Rejects naming `what` after `timeoutMs`.
 */
export async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Records each value a listener receives, and resolves waits for a value that satisfies a test. */
export class Recorder<T> {
  readonly values: T[] = [];
  readonly #waiters = new Set<{ test: (value: T) => boolean; resolve: (value: T) => void }>();

  readonly listener = (value: T): void => {
    this.values.push(value);
    for (const waiter of this.#waiters) {
      if (waiter.test(value)) {
        this.#waiters.delete(waiter);
        waiter.resolve(value);
      }
    }
  };

  /** The first value (already received or to come) for which `test` holds; rejects after `timeoutMs`. */
  next(test: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
    const seen = this.values.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve: (value: T) => (clearTimeout(timer), resolve(value)) };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no matching value within ${timeoutMs} ms (got ${this.values.length})`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}

/** Options of every suite: a hang (an awaited event that never comes) fails instead of stalling the run. */
export const SUITE = { timeout: 30_000 };

const tracked: Array<() => unknown> = [];

/**
 * Registers `resource` to be closed by {@link closeTracked}, which every test file runs after each
 * test and after all of them: a test that fails or times out half-way must not leave a Redis
 * connection reconnecting forever, which would keep the test process (and `npm test`) from exiting.
 */
export function track<T>(resource: T, close: (resource: T) => unknown): T {
  tracked.push(() => close(resource));
  return resource;
}

/** Closes every tracked resource, newest first; failures are ignored (some were closed already). */
export async function closeTracked(): Promise<void> {
  for (const close of tracked.splice(0).reverse()) {
    await Promise.resolve()
      .then(close)
      .catch(() => undefined);
  }
}

/**
 * Registers what every Redis test file needs: one redis-server for the file; before each test a
 * flushed database and a raw client (`raw`) to inspect it; after each test every tracked resource
 * closed (so a failing test leaves no reconnecting client behind).
 */
export function redisForFile(): { readonly server: RedisServer; readonly raw: Redis } {
  const state = {} as { server: RedisServer; raw: Redis };
  before(async () => {
    state.server = await startRedis();
  });
  after(async () => {
    await closeTracked();
    await state.server.stop();
  });
  beforeEach(async () => {
    state.raw = track(new Redis(state.server.url, { maxRetriesPerRequest: 0 }), (r) => r.disconnect());
    state.raw.on('error', () => {});
    await state.raw.flushall();
  });
  afterEach(closeTracked);
  return state;
}
