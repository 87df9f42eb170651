/**
 * RedisSessionStore beyond the contract (design.md §2.1): several instances (workers) over
 * one real redis-server, the local cache, revocation over pub/sub, and Redis going away.
 */
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { newSessionHandle, newSessionId } from '../../shared/identity/secrets.js';
import { sessionKey } from '../../shared/backends/session-store.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import {
  SESSIONS_INDEX_KEY,
  sessionHandleKey,
  sessionRedisKey,
  sessionsByEmailKey,
  sessionsBySidKey,
  sessionsBySubKey,
} from '../../shared/backends/redis/redis-keys.js';
import { RedisSessionStore, type RedisSessionStoreOptions } from '../../shared/backends/redis/sessions/redis-session-store.js';
import { eventually } from '../support/eventually.js';
import { Recorder } from '../support/recorder.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { sampleSession } from '../support/samples.js';
import { startTcpRelay } from '../support/tcp-relay.js';
import { track } from '../support/tracked.js';

const redis = redisForFile();

/** A store on its own connections, as another worker process would have; ready to use. */
async function worker(options: RedisSessionStoreOptions = {}, url = redis.server.url): Promise<{ store: RedisSessionStore; connections: RedisConnections }> {
  const connections = track(new RedisConnections(url, { maxReconnectDelayMs: 100, writeWaitMs: 200 }), (c) => c.close());
  const store = track(new RedisSessionStore(connections, options), (s) => s.close());
  await connections.ready(5_000);
  return { store, connections };
}

describe('RedisSessionStore across workers', SUITE, () => {
  it('stores only the hash of the id: a hash (data, seen, exp) expiring with the session, a handle key and the indexes', async () => {
    const { store } = await worker();
    const session = sampleSession({ expiresAt: Date.now() + 60_000, sid: 'sid-layout' });
    const snapshot = structuredClone(session);
    const id = await store.create(session);
    const key = sessionKey(id);
    const keys = (await redis.raw.keys('*')).sort();
    assert.deepEqual(
      keys,
      [
        sessionRedisKey(key),
        sessionHandleKey(session.handle),
        SESSIONS_INDEX_KEY,
        sessionsBySubKey(session.user.sub),
        sessionsByEmailKey('grace@example.com'),
        sessionsBySidKey('sid-layout'),
      ].sort(),
    );
    // Neither a key nor a value anywhere holds the session id (the cookie's value).
    for (const name of keys) {
      assert.ok(!name.includes(id), name);
      const type = await redis.raw.type(name);
      const values =
        type === 'hash' ? Object.values(await redis.raw.hgetall(name)) : type === 'zset' ? await redis.raw.zrange(name, 0, -1) : [(await redis.raw.get(name))!];
      for (const value of values) assert.ok(!value.includes(id), `${name} holds the id`);
    }
    const stored = await redis.raw.hgetall(sessionRedisKey(key));
    assert.deepEqual(Object.keys(stored).sort(), ['data', 'exp', 'seen']);
    assert.deepEqual(JSON.parse(stored.data!), snapshot);
    assert.equal(Number(stored.seen), session.lastSeenAt);
    assert.equal(Number(stored.exp), session.expiresAt);
    assert.equal(await redis.raw.get(sessionHandleKey(session.handle)), key, 'the handle leads to the hash');
    for (const expiring of [sessionRedisKey(key), sessionHandleKey(session.handle)]) {
      const remaining = session.expiresAt - Date.now();
      const pttl = await redis.raw.pttl(expiring);
      assert.ok(pttl > remaining - 1_000 && pttl <= remaining + 1, `${expiring}: PTTL ${pttl}, ${remaining} ms left`);
    }
    assert.equal(await redis.raw.zscore(SESSIONS_INDEX_KEY, session.handle), String(session.expiresAt), 'indexed by handle, scored by expiry');
  });

  it('a session created on worker A is readable on worker B at once', async () => {
    const [a, b] = [await worker(), await worker()];
    const session = sampleSession();
    const id = await a.store.create(session);
    assert.deepEqual(await b.store.get(id), session);
  });

  it('"no such session" is not cached: a session that appears right after a miss is found', async () => {
    const [a, b] = [await worker({ cacheTtlMs: 60_000 }), await worker()];
    const session = sampleSession();
    const id = await b.store.create(session);
    const stored = sessionRedisKey(sessionKey(id));
    await redis.raw.rename(stored, `${stored}:away`); // not there yet when A looks
    assert.equal(await a.store.get(id), null);
    await redis.raw.rename(`${stored}:away`, stored); // there now, as B wrote it
    assert.deepEqual(await a.store.get(id), session);
  });

  it('reads are served from the local cache within its TTL', async () => {
    const { store } = await worker({ cacheTtlMs: 60_000 });
    const session = sampleSession();
    const id = await store.create(session);
    await redis.raw.del(sessionRedisKey(sessionKey(id))); // gone from Redis without a revocation
    assert.deepEqual(await store.get(id), session);
  });

  it('logout on worker A evicts the session from worker B\'s cache at once (revocation over pub/sub)', async () => {
    const [a, b] = [await worker({ cacheTtlMs: 60_000 }), await worker({ cacheTtlMs: 60_000 })];
    const session = sampleSession();
    const id = await a.store.create(session);
    assert.deepEqual(await b.store.get(id), session, 'cached on B');
    const started = Date.now();
    await a.store.destroy(id);
    // The cache TTL is a minute: only the revocation message can explain B forgetting it.
    await eventually('worker B to forget the session', async () => (await b.store.get(id)) === null, 1_000);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(await redis.raw.exists(sessionRedisKey(sessionKey(id))), 0);
  });

  it("revoke on worker A makes worker B's cached session read as null within a second (revocation over pub/sub)", async () => {
    const [a, b] = [await worker({ cacheTtlMs: 60_000 }), await worker({ cacheTtlMs: 60_000 })];
    const session = sampleSession();
    const kept = sampleSession();
    const [id, keptId] = [await a.store.create(session), await a.store.create(kept)];
    assert.deepEqual(await b.store.get(id), session, 'cached on B');
    assert.notEqual(await b.store.get(keptId), null);
    const started = Date.now();
    assert.equal(await a.store.revoke([session.handle]), 1);
    // The cache TTL is a minute: only the revocation message can explain B forgetting it.
    await eventually("worker B to stop accepting the revoked session", async () => (await b.store.get(id)) === null, 1_000);
    assert.ok(Date.now() - started < 1_000);
    assert.equal(await b.store.byHandle(session.handle), null);
    assert.equal(await redis.raw.exists(sessionRedisKey(sessionKey(id)), sessionHandleKey(session.handle)), 0, 'gone from Redis');
    assert.equal(await redis.raw.zscore(SESSIONS_INDEX_KEY, session.handle), null);
    assert.notEqual(await b.store.get(keptId), null, 'the other session is still served');
  });

  it("update on worker A: worker B reads the new data promptly, though it had the session cached", async () => {
    const [a, b] = [await worker({ cacheTtlMs: 60_000 }), await worker({ cacheTtlMs: 60_000 })];
    const session = sampleSession({ refreshToken: 'sealed-1' });
    const id = await a.store.create(session);
    assert.equal((await b.store.get(id))?.refreshToken, 'sealed-1', 'cached on B');
    const updated = await a.store.update(session.handle, (current) => ({
      ...current,
      refreshToken: 'sealed-2',
      user: { ...current.user, groups: ['ops'] },
    }));
    assert.equal(updated, true);
    await eventually('worker B to read the new data', async () => (await b.store.get(id))?.refreshToken === 'sealed-2', 1_000);
    assert.deepEqual((await b.store.get(id))?.user.groups, ['ops']);
  });

  it("a revalidation request from worker B's store reaches the listener on A's (the admin plane)", async () => {
    const [a, b] = [await worker(), await worker()];
    const session = sampleSession();
    await b.store.create(session);
    const heard = new Recorder<string>();
    a.store.onRevalidationRequest(heard.listener);
    await a.connections.subscriptions.confirmed();
    b.store.requestRevalidation(session.handle);
    assert.equal(await heard.next((handle) => handle === session.handle), session.handle);
  });

  it('the refresh lock is exclusive across workers; only its holder releases it early', async () => {
    const [a, b] = [await worker(), await worker()];
    const handle = newSessionHandle();
    assert.equal(await a.store.lockRefresh(handle, 60_000), true);
    assert.equal(await b.store.lockRefresh(handle, 60_000), false, 'held by A');
    await b.store.unlockRefresh(handle); // B does not hold it: nothing happens
    assert.equal(await b.store.lockRefresh(handle, 60_000), false, 'still held by A');
    await a.store.unlockRefresh(handle);
    assert.equal(await b.store.lockRefresh(handle, 60_000), true, 'released by A');
    assert.equal(await a.store.lockRefresh(handle, 60_000), false, 'held by B');
  });

  it('a lock its holder never released (a worker that died mid-refresh) lapses with its TTL for the others', async () => {
    const [a, b] = [await worker(), await worker()];
    const handle = newSessionHandle();
    assert.equal(await a.store.lockRefresh(handle, 300), true);
    assert.equal(await b.store.lockRefresh(handle, 300), false);
    await eventually('the lock to lapse', () => b.store.lockRefresh(handle, 60_000), 3_000);
    assert.equal(await a.store.lockRefresh(handle, 60_000), false, 'now B holds it');
  });

  it('the cache is bounded: past cacheMaxEntries the least recently validated entry goes first', async () => {
    const { store } = await worker({ cacheTtlMs: 60_000, cacheMaxEntries: 2 });
    const ids = [await store.create(sampleSession()), await store.create(sampleSession()), await store.create(sampleSession())];
    await redis.raw.flushall();
    assert.equal(await store.get(ids[0]!), null, 'the oldest entry was evicted, so Redis was asked');
    assert.notEqual(await store.get(ids[1]!), null);
    assert.notEqual(await store.get(ids[2]!), null);
  });
});

describe('RedisSessionStore when Redis goes away', SUITE, () => {
  it('serves sessions validated within the cache TTL, rejects any other (fail closed), and recovers after a restart', async () => {
    const [a, b] = [await worker(), await worker({ cacheTtlMs: 5_000 })];
    const validated = sampleSession();
    const validatedId = await a.store.create(validated);
    const neverReadOnB = await a.store.create(sampleSession());
    mock.timers.enable({ apis: ['Date'], now: Date.now() }); // the clock stands still unless ticked
    try {
      assert.deepEqual(await b.store.get(validatedId), validated);
      await redis.server.kill();
      assert.deepEqual(await b.store.get(validatedId), validated, 'validated just now: still served');
      await assert.rejects(b.store.get(neverReadOnB), { code: 'REDIS_UNAVAILABLE' }, 'not validated on B: cannot tell, so reject');
      await assert.rejects(b.store.get(newSessionId()), { code: 'REDIS_UNAVAILABLE' }, 'unknown: never null for "cannot tell"');
      mock.timers.tick(4_999);
      assert.deepEqual(await b.store.get(validatedId), validated, 'still within the TTL');
      mock.timers.tick(2);
      await assert.rejects(b.store.get(validatedId), { code: 'REDIS_UNAVAILABLE' }, 'validated longer ago than the TTL');
    } finally {
      mock.timers.reset();
    }
    const failure = await b.store.get(neverReadOnB).catch((error: Error) => error);
    assert.ok(failure instanceof Error && !failure.message.includes(neverReadOnB) && !failure.message.includes(sessionKey(neverReadOnB)));
    await assert.rejects(a.store.create(sampleSession()), { code: 'REDIS_UNAVAILABLE' });
    await assert.rejects(a.store.destroy(validatedId), { code: 'REDIS_UNAVAILABLE' });

    await redis.server.restart(); // empty: nothing persisted
    await Promise.all([a.connections.ready(5_000), b.connections.ready(5_000)]);
    const session = sampleSession();
    const id = await a.store.create(session);
    assert.deepEqual(await b.store.get(id), session, 'the same objects work again');
    await a.store.destroy(id);
    await eventually('the revocation to reach B after the restart', async () => (await b.store.get(id)) === null, 1_000);
  });

  it('a write while Redis is coming back waits for the reconnect instead of failing', async () => {
    const { store, connections } = await worker();
    await redis.server.kill();
    await eventually('the worker to notice', () => connections.command.status !== 'ready');
    const defaults = track(new RedisConnections(redis.server.url, { maxReconnectDelayMs: 100 }), (c) => c.close()); // writeWaitMs 2 s
    const patient = track(new RedisSessionStore(defaults), (s) => s.close());
    const creating = patient.create(sampleSession());
    await redis.server.restart();
    const id = await creating;
    assert.notEqual(await store.get(id), null);
  });

  it('after its subscriber reconnects (revocations may have been missed) a worker drops its whole cache', async () => {
    const relay = track(await startTcpRelay(redis.server.port), (r) => r.close());
    const { store, connections } = await worker({ cacheTtlMs: 60_000 }, relay.url);
    const id = await store.create(sampleSession());
    assert.notEqual(await store.get(id), null);
    await redis.raw.del(sessionRedisKey(sessionKey(id))); // revoked while this worker is cut off
    relay.cut();
    await eventually('the worker to notice', () => connections.command.status !== 'ready');
    relay.restore();
    await connections.ready(5_000);
    await eventually('the cache to be dropped', async () => (await store.get(id)) === null, 1_000);
  });
});
