/**
 * Waiting, not crashing (README "Running a fleet"): a proxy or admin process that cannot reach Redis at start
 * stays up and not ready, its `/readyz` naming what it waits for, retries with backoff, and says
 * why once per reason, never a password; the old ones exited after 10 s, into a process manager's
 * restart loop. When Redis comes, they connect, and the admin does then what its start does
 * against Redis (the registry and assertion keys published, the access-log stream consumed).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { Backends } from '../../shared/backends/backends.js';
import { openBackends } from '../../shared/backends/open-backends.js';
import { loadConfig } from '../../shared/config/config.js';
import { createLogger } from '../../shared/logger.js';
import { createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startGatehouseProcess, statusOf, type GatehouseProcess } from '../support/gatehouse-process.js';
import { startIdentityProvider } from '../support/identity-provider.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { sampleSession } from '../support/samples.js';
import { startEchoUpstream } from '../support/upstream.js';

async function readiness(internalUrl: string): Promise<{ status: number; checks: Record<string, boolean> }> {
  const response = await request(`${internalUrl}/readyz`);
  return { status: response.statusCode, checks: ((await response.body.json()) as { checks: Record<string, boolean> }).checks };
}

test('a proxy started while Redis is unreachable stays up, not ready, says why once, and connects when Redis comes', async (t) => {
  const [redisPort, port, internalPort] = [await freePort(), await freePort(), await freePort()];
  const proxy = startGatehouseProcess('proxy/process/main.js', {
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PASSWORD: 'never-logged-password',
    PORT: String(port),
    INTERNAL_PORT: String(internalPort),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    LOG_LEVEL: 'info',
  });
  const internalUrl = `http://127.0.0.1:${internalPort}`;
  try {
    await eventually('its internal port', async () => (await readiness(internalUrl)).status === 503);
    assert.deepEqual(await readiness(internalUrl), { status: 503, checks: { redis: false, registry: false, 'assertion-keys': false } });
    // The old process gave up after 10 s: this one is still here, with its health endpoint up.
    await sleep(11_000);
    assert.equal(proxy.child.exitCode, null, proxy.output());
    assert.equal((await request(`${internalUrl}/healthz`)).statusCode, 200);
    const warnings = proxy.output().split('\n').filter((line) => line.includes('cannot reach redis'));
    t.diagnostic(`after 11 s: ${warnings.length} warning lines (one per connection, once per reason)`);
    assert.ok(warnings.length >= 1 && warnings.length <= 3, warnings.join('\n'));
    assert.match(warnings[0]!, /ECONNREFUSED/);
    assert.ok(!proxy.output().includes('never-logged-password'));

    const redis = await startRedis(['--port', String(redisPort), '--requirepass', 'never-logged-password']);
    try {
      await eventually('Redis reachable for the proxy', async () => (await readiness(internalUrl)).checks.redis === true, 10_000);
    } finally {
      await redis.stop();
    }
  } finally {
    await proxy.stop();
  }
});

/** One line of a process's JSON log output, as pino writes it (the fields the test reads). */
interface LogLine {
  msg?: string;
  role?: string;
  err?: { message?: string };
}

/** Its log lines carrying `message`, parsed (non-JSON lines skipped). */
function logLines(output: string, message: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.includes(message))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as LogLine];
      } catch {
        return [];
      }
    });
}

/** Resolves with the exit code if `process` exits within `ms`, else with undefined. */
async function exitWithin(process: GatehouseProcess, ms: number): Promise<number | null | undefined> {
  return Promise.race([process.exited, sleep(Math.max(0, ms)).then(() => undefined)]);
}

/** `wait`, failing at once with the process's output if `process` exits first. */
async function whileRunning<T>(process: GatehouseProcess, wait: Promise<T>): Promise<T> {
  const exited = process.exited.then((code) => {
    throw new Error(`the process exited (${code}) while waiting:\n${process.output()}`);
  });
  return Promise.race([wait, exited]);
}

test('an admin process started while Redis is unreachable stays up, not ready, says why once, and does its whole start when Redis comes', async (t) => {
  const [redisPort, adminPort, proxyPort, internalPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-waiting-'));
  const publicUrl = `http://127.0.0.1:${proxyPort}`;
  const idp = await startIdentityProvider({ clients: [{ clientId: 'gatehouse-waiting', clientSecret: 'waiting-secret', redirectUris: [`${publicUrl}/auth/callback`], postLogoutRedirectUris: [`${publicUrl}/`] }] });
  const upstream = await startEchoUpstream();
  const env = {
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    REDIS_PASSWORD: 'never-logged-password',
    PUBLIC_URL: publicUrl,
    ADMIN_PORT: String(adminPort),
    ADMIN_INTERNAL_URL: `http://127.0.0.1:${adminPort}`,
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: 'gatehouse-waiting',
    OIDC_CLIENT_SECRET: 'waiting-secret',
    ADMIN_EMAILS: 'admin@example.com',
    RATE_LIMIT_GENERAL: '0',
    RATE_LIMIT_AUTH: '0',
    LOG_LEVEL: 'info',
  };
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const startedAt = Date.now();
  const admin = startGatehouseProcess('admin/process/main.js', { ...env, DATABASE_PATH: join(dir, 'gateway.db') });
  let redis: RedisServer | undefined;
  let proxy: GatehouseProcess | undefined;
  let backends: Backends | undefined;
  try {
    await whileRunning(admin, eventually('the admin port', async () => (await readiness(adminUrl)).status === 503, 30_000));
    assert.deepEqual(await readiness(adminUrl), { status: 503, checks: { redis: false, registry: false, 'assertion-keys': false } });
    // The old process gave up after 10 s: this one is still here, its health endpoint up.
    const exitCode = await exitWithin(admin, 11_000 - (Date.now() - startedAt));
    assert.equal(exitCode, undefined, `the admin process exited (${exitCode}):\n${admin.output()}`);
    assert.equal((await request(`${adminUrl}/healthz`)).statusCode, 200);
    assert.equal((await readiness(adminUrl)).status, 503);
    const warnings = logLines(admin.output(), 'cannot reach redis');
    t.diagnostic(`after 11 s: ${warnings.length} "cannot reach redis" lines (${warnings.map((line) => line.role).join(', ')})`);
    assert.ok(warnings.length >= 1, admin.output());
    const reasons = warnings.map((line) => `${line.role}: ${line.err?.message}`);
    assert.equal(new Set(reasons).size, reasons.length, `once per connection and reason:\n${reasons.join('\n')}`);
    assert.match(warnings[0]!.err?.message ?? '', /ECONNREFUSED/);
    assert.ok(!admin.output().includes('never-logged-password'));
    // Never connected is not "lost": no line says a connection was lost before there was one.
    assert.deepEqual(logLines(admin.output(), 'redis connection lost'), []);

    redis = await startRedis(['--port', String(redisPort), '--requirepass', 'never-logged-password']);
    await eventually('the admin process ready once Redis comes', async () => (await readiness(adminUrl)).status === 200, 15_000);

    // A proxy is ready only with a registry snapshot and an assertion key set: the admin published both.
    proxy = startGatehouseProcess('proxy/process/main.js', { ...env, PORT: String(proxyPort), INTERNAL_PORT: String(internalPort), PROXY_WORKERS: '1' });
    await eventually('a proxy ready against it', async () => (await readiness(`http://127.0.0.1:${internalPort}`)).status === 200, 30_000);

    const config = loadConfig({ ...env, LOG_LEVEL: 'silent' });
    backends = await openBackends(config, createLogger('silent', 'test'));
    const session = sampleSession({ user: { sub: 'admin-sub', name: 'Ada Admin', email: 'admin@example.com', isAdmin: true }, idToken: null, expiresAt: Date.now() + 3_600_000 });
    const signedIn = { cookie: `gw_session=${await backends.sessions.create(session)}`, csrfToken: session.csrfToken };
    const serviceId = await createService(adminUrl, signedIn, { name: 'Echo', path: '/echo', targetUrl: upstream.origin, requireAuth: false });
    await eventually('the new service routed by the proxy', async () => (await statusOf(`${publicUrl}/echo/after-the-wait`)) === 200);

    // The access-log stream's consumer group came too: the proxied request's record is stored.
    const logged = async () => {
      const page = await request(`${adminUrl}/api/services/${serviceId}/logs?limit=100`, { headers: { cookie: signedIn.cookie } });
      return ((await page.body.json()) as { logs: Array<{ path: string }> }).logs.some((log) => log.path === '/echo/after-the-wait');
    };
    await eventually('the access-log record of the proxied request stored', logged, 15_000);
    assert.ok(!admin.output().includes('never-logged-password'));
  } finally {
    await proxy?.stop();
    await admin.stop();
    await backends?.close();
    await redis?.stop();
    await upstream.close();
    await idp.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
