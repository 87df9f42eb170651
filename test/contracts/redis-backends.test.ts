/** openRedisBackends: the one call that wires the Redis implementations of the four interfaces. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../../shared/logger.js';
import { openRedisBackends } from '../../shared/backends/redis/redis-backends.js';
import { freePort } from '../support/free-port.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { sampleAssertionKeySet, sampleEntry, sampleService, sampleSession } from '../support/samples.js';
import { tempDatabase } from '../support/temp-database.js';
import { track } from '../support/tracked.js';

const logger = createLogger('silent', 'test');
const redis = redisForFile();

const check = async (checks: readonly { name: string; check(): boolean | Promise<boolean> }[], name: string) =>
  checks.find((item) => item.name === name)!.check();

describe('openRedisBackends', SUITE, () => {
  it('wires sessions, bus, both limiters, the sink and a consumer over one Redis, with readiness checks', async () => {
    const database = track(tempDatabase(), (d) => d.close());
    const config = { redisUrl: redis.server.url, rateLimitGeneral: { points: 2, durationMs: 60_000 }, rateLimitAuth: { points: 1, durationMs: 60_000 } };
    const admin = track(await openRedisBackends(config, logger), (b) => b.close());
    const worker = track(await openRedisBackends(config, logger), (b) => b.close());
    assert.deepEqual(admin.readiness.map((item) => item.name), ['redis', 'registry', 'assertion-keys']);
    assert.equal(await check(worker.readiness, 'redis'), true);
    assert.equal(await check(worker.readiness, 'registry'), false, 'no snapshot yet');
    assert.equal(await check(worker.readiness, 'assertion-keys'), false, 'no key set yet');
    await admin.bus.publishRegistry([sampleService(1)]);
    await new Promise<void>((resolve) => worker.bus.onRegistry(() => resolve()));
    assert.equal(await check(worker.readiness, 'registry'), true);
    assert.equal(await check(worker.readiness, 'assertion-keys'), false, 'the registry is not the key set');
    await admin.bus.publishAssertionKeys(await sampleAssertionKeySet());
    await new Promise<void>((resolve) => worker.bus.onAssertionKeys(() => resolve()));
    assert.equal(await check(worker.readiness, 'assertion-keys'), true);

    const id = await admin.sessions.create(sampleSession());
    assert.notEqual(await worker.sessions.get(id), null);

    assert.equal((await worker.generalLimiter.consume('ip')).allowed, true);
    assert.equal((await admin.generalLimiter.consume('ip')).allowed, true);
    assert.equal((await worker.generalLimiter.consume('ip')).allowed, false, 'general counts are shared');
    assert.equal((await worker.authLimiter.consume('ip')).allowed, true, 'the auth limiter counts apart');

    const sink = worker.accessLogSink();
    assert.equal(worker.accessLogSink(), sink, 'one sink per process');
    const consumer = admin.consumeAccessLogs(database.storeAccessLogs);
    sink.write(sampleEntry(1));
    await sink.flush();
    await consumer.drained();
    assert.equal(database.storedPaths().length, 1);
    await worker.close();
    await admin.close();
    assert.equal(admin.connections.command.status, 'end');
    assert.equal(await check(admin.readiness, 'redis'), false);
  });

  it('reports Redis unreachable in readiness while it is down, and ready again after a restart', async () => {
    const options = { connection: { maxReconnectDelayMs: 100 } };
    const backends = track(await openRedisBackends({ redisUrl: redis.server.url, rateLimitGeneral: null, rateLimitAuth: null }, logger, options), (b) => b.close());
    await redis.server.kill();
    assert.equal(await check(backends.readiness, 'redis'), false);
    await redis.server.restart();
    await backends.connections.ready(5_000);
    assert.equal(await check(backends.readiness, 'redis'), true);
  });

  it('refuses to start when Redis does not answer in time, without quoting REDIS_URL (it may hold a password)', async () => {
    const url = `redis://:s3cret-password@127.0.0.1:${await freePort()}`;
    const started = Date.now();
    await assert.rejects(
      openRedisBackends({ redisUrl: url, rateLimitGeneral: null, rateLimitAuth: null }, logger, { startupTimeoutMs: 300 }),
      (error: Error) => /REDIS_URL/.test(error.message) && !error.message.includes('s3cret'),
    );
    assert.ok(Date.now() - started < 3_000);
  });
});
