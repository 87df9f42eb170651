/**
 * The ReplayGuard contract against SqliteReplayGuard (embedded, a migrated temporary database) and
 * RedisReplayGuard (real redis-server, each guard on its own connections as a worker has them);
 * then what each keeps in its storage.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SqliteReplayGuard } from '../../shared/backends/embedded/sqlite-replay-guard.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { usedTokenIdKey } from '../../shared/backends/redis/redis-keys.js';
import { RedisReplayGuard } from '../../shared/backends/redis/redis-replay-guard.js';
import { usedIdKey } from '../../shared/backends/replay-guard.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import { tempDatabase } from '../support/temp-database.js';
import { closeTracked, track } from '../support/tracked.js';
import { replayGuardContract } from './replay-guard.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();

replayGuardContract('SqliteReplayGuard', async () => {
  const temp = track(tempDatabase(), (t) => t.close());
  return {
    guard: new SqliteReplayGuard(temp.db),
    another: async () => new SqliteReplayGuard(temp.db),
    close: closeTracked,
  };
});

async function redisGuard(options: { maxReconnectDelayMs?: number } = {}): Promise<RedisReplayGuard> {
  const connections = track(new RedisConnections(redis.server.url, options), (c) => c.close());
  await connections.ready(5_000);
  return new RedisReplayGuard(connections);
}

replayGuardContract('RedisReplayGuard', async () => ({
  guard: await redisGuard(),
  another: () => redisGuard(),
  close: closeTracked,
}));

replayGuardContract('RedisReplayGuard on a Redis Cluster', async () => {
  const open = async () => {
    const connections = track(new RedisConnections(cluster.cluster.target), (c) => c.close());
    await connections.ready(5_000);
    return new RedisReplayGuard(connections);
  };
  return { guard: await open(), another: open, close: closeTracked };
});

describe('ReplayGuard storage', SUITE, () => {
  it('SqliteReplayGuard keeps the SHA-256 of the id until its time, never the id', async () => {
    const temp = track(tempDatabase(), (t) => t.close());
    const guard = new SqliteReplayGuard(temp.db);
    const until = Date.now() + 60_000;
    assert.equal(await guard.firstUse('jti-stored', until), true);
    assert.deepEqual(temp.db.prepare('SELECT key, expires_at FROM used_token_ids').all(), [{ key: usedIdKey('jti-stored'), expires_at: until }]);
  });

  it('RedisReplayGuard keeps one key per SHA-256 of an id, expiring at its time, never the id', async () => {
    const guard = await redisGuard();
    const until = Date.now() + 60_000;
    assert.equal(await guard.firstUse('jti-stored', until), true);
    const key = usedTokenIdKey(usedIdKey('jti-stored'));
    assert.deepEqual(await redis.raw.keys('*'), [key]);
    assert.ok(!key.includes('jti-stored'));
    const pttl = await redis.raw.pttl(key);
    assert.ok(pttl > 55_000 && pttl <= 60_000, String(pttl));
  });

  it('RedisReplayGuard rejects (REDIS_UNAVAILABLE) while Redis is away: a token it cannot check is refused', async () => {
    const guard = await redisGuard({ maxReconnectDelayMs: 100 });
    await redis.server.kill();
    const failure = await guard.firstUse('jti-down', Date.now() + 60_000).then(
      () => assert.fail('resolved while Redis was away'),
      (error: unknown) => error as Error & { code?: string },
    );
    assert.equal(failure.code, 'REDIS_UNAVAILABLE');
    assert.ok(!failure.message.includes('jti-down') && !failure.message.includes(usedIdKey('jti-down')), failure.message);
    await redis.server.restart();
  });
});
