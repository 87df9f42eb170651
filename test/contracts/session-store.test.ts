/** The SessionStore contract against SqliteSessionStore (embedded) and RedisSessionStore (real redis-server). */
import { after, afterEach, before } from 'node:test';
import { SqliteSessionStore } from '../../shared/backends/embedded/sqlite-session-store.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { RedisSessionStore } from '../../shared/backends/redis/redis-session-store.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { closeTracked, tempDatabase, track } from './fixtures.js';
import { sessionStoreContract } from './session-store.contract.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
afterEach(closeTracked);
after(async () => {
  await closeTracked();
  await redis.stop();
});

sessionStoreContract('SqliteSessionStore', async () => {
  const temp = track(tempDatabase(), (t) => t.close());
  const store = track(new SqliteSessionStore(temp.db), (s) => s.close());
  return {
    store,
    close: closeTracked,
  };
});

sessionStoreContract('RedisSessionStore', async () => {
  const connections = track(new RedisConnections(redis.url), (c) => c.close());
  await connections.ready(5_000);
  await connections.command.flushall();
  const store = track(new RedisSessionStore(connections), (s) => s.close());
  return { store, close: closeTracked };
});
