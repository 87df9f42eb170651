/**
 * Nothing is lost across a failover (README "Running a fleet"): an access-log batch leaves a proxy's buffer, and a
 * new session counts as stored, only once a replica of the primary has it. Against a real primary
 * with a real replica (`--replicaof`), frozen (SIGSTOP) to stand for a replica that does not answer;
 * and against a primary without replicas, where nothing waits.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { RedisAccessLogSink } from '../../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { ACCESS_LOG_STREAM, sessionsBySubKey } from '../../shared/backends/redis/redis-keys.js';
import { RedisSessionStore } from '../../shared/backends/redis/sessions/redis-session-store.js';
import { eventually } from '../support/eventually.js';
import { startRedis, SUITE, type RedisServer } from '../support/redis.js';
import { sampleEntry, sampleSession } from '../support/samples.js';
import { closeTracked, track } from '../support/tracked.js';

let primary: RedisServer;
let replica: RedisServer;
let replicaClient: Redis;

before(async () => {
  primary = await startRedis();
  replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port), '--repl-diskless-sync-delay', '0']);
  replicaClient = new Redis(replica.url, { maxRetriesPerRequest: 0 });
  // In sync as the primary sees it, and acknowledging: a replica just online may let its first
  // WAIT time out (seen with Redis 7.0), which a sink would simply retry.
  const primaryClient = new Redis(primary.url, { maxRetriesPerRequest: 0 });
  await eventually('the replica acknowledging writes', async () => (await primaryClient.wait(1, 500)) === 1, 10_000);
  primaryClient.disconnect();
});
afterEach(async () => {
  replica.resume();
  await closeTracked();
});
after(async () => {
  replicaClient.disconnect();
  await replica.stop();
  await primary.stop();
});

async function opened(url: string): Promise<RedisConnections> {
  const connections = track(new RedisConnections(url), (c) => c.close());
  await connections.ready(5_000);
  return connections;
}

describe('with a replica', SUITE, () => {
  it('a shipped batch is on the replica already; one no replica confirms stays buffered and is shipped once it does', async () => {
    const errors: string[] = [];
    const sink = track(new RedisAccessLogSink(await opened(primary.url), { replicaWaitMs: 300, intervalMs: 50, onError: (error) => errors.push(String(error)) }), (s) => s.close());
    sink.write(sampleEntry(1));
    await sink.flush();
    assert.equal(sink.shipped, 1, errors.join('\n'));
    assert.equal(await replicaClient.xlen(ACCESS_LOG_STREAM), 1, 'the replica had it when the sink counted it shipped');

    replica.pause();
    sink.write(sampleEntry(2));
    await sink.flush();
    assert.equal(sink.shipped, 1, 'not counted while no replica confirmed it');
    replica.resume();
    await eventually('the batch shipped once the replica answers', () => sink.shipped === 2, 10_000);
    assert.equal(sink.dropped, 0);
  });

  it('a new session is on the replica when create resolves, an ended one gone from it; with the replica silent, both fail and say why', async () => {
    const store = track(new RedisSessionStore(await opened(primary.url)), (s) => s.close());
    const id = await store.create(sampleSession({ user: { ...sampleSession().user, sub: 'replicated' } }));
    assert.equal(await replicaClient.zcard(sessionsBySubKey('replicated')), 1);
    await store.destroy(id);
    assert.equal(await replicaClient.zcard(sessionsBySubKey('replicated')), 0, 'a failover cannot bring an ended session back');

    const kept = await store.create(sampleSession());
    replica.pause();
    await assert.rejects(store.destroy(kept), /revoking a session failed: Error: no replica confirmed the write/);
    const started = Date.now();
    await assert.rejects(store.create(sampleSession()), /storing a session failed: Error: no replica confirmed the write within 1000 ms/);
    const waited = Date.now() - started;
    assert.ok(waited >= 1_000 && waited < 3_000, `${waited} ms`);
  });
});

describe('without replicas', SUITE, () => {
  it('a write waits for nobody', async () => {
    const lone = await startRedis();
    try {
      const store = track(new RedisSessionStore(await opened(lone.url)), (s) => s.close());
      const started = Date.now();
      await store.create(sampleSession());
      const sink = track(new RedisAccessLogSink(await opened(lone.url)), (s) => s.close());
      sink.write(sampleEntry(1));
      await sink.flush();
      assert.equal(sink.shipped, 1);
      assert.ok(Date.now() - started < 1_000, `${Date.now() - started} ms`);
    } finally {
      await closeTracked();
      await lone.stop();
    }
  });
});
