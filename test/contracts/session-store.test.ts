/** The SessionStore contract against SqliteSessionStore (embedded) and RedisSessionStore (real redis-server). */
import { SqliteSessionStore } from '../../shared/backends/embedded/sqlite-session-store.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { RedisSessionStore } from '../../shared/backends/redis/redis-session-store.js';
import { redisForFile } from '../support/redis.js';
import { tempDatabase } from '../support/temp-database.js';
import { closeTracked, track } from '../support/tracked.js';
import { sessionStoreContract } from './session-store.contract.js';

const redis = redisForFile();

sessionStoreContract('SqliteSessionStore', async () => {
  const temp = track(tempDatabase(), (t) => t.close());
  const store = track(new SqliteSessionStore(temp.db), (s) => s.close());
  return {
    store,
    close: closeTracked,
  };
});

sessionStoreContract('RedisSessionStore', async () => {
  const connections = track(new RedisConnections(redis.server.url), (c) => c.close());
  await connections.ready(5_000);
  const store = track(new RedisSessionStore(connections), (s) => s.close());
  return { store, close: closeTracked };
});
