/** The SessionStore contract against SqliteSessionStore (embedded) and RedisSessionStore (real redis-server). */
import { SqliteSessionStore } from '../../shared/backends/embedded/sqlite-session-store.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { RedisSessionStore } from '../../shared/backends/redis/redis-session-store.js';
import { redisForFile } from '../support/redis.js';
import { tempDatabase } from '../support/temp-database.js';
import { closeTracked, track } from '../support/tracked.js';
import { sessionStoreContract } from './session-store.contract.js';

const redis = redisForFile();

sessionStoreContract('SqliteSessionStore', async (options = {}) => {
  const temp = track(tempDatabase(), (t) => t.close());
  const store = track(new SqliteSessionStore(temp.db, { idleTimeoutMs: options.idleTimeoutMs }), (s) => s.close());
  return {
    store,
    close: closeTracked,
  };
});

sessionStoreContract('RedisSessionStore', async (options = {}) => {
  const connections = track(new RedisConnections(redis.server.url), (c) => c.close());
  await connections.ready(5_000);
  const store = track(new RedisSessionStore(connections, { idleTimeoutMs: options.idleTimeoutMs }), (s) => s.close());
  // A listener registered on the store SUBSCRIBEs on the shared subscriber connection.
  return { store, listening: () => connections.subscriptions.confirmed(), close: closeTracked };
});
