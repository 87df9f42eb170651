/** The SessionStore contract against SqliteSessionStore (embedded) and RedisSessionStore (a real redis-server, and a real Redis Cluster). */
import { SqliteSessionStore } from '../../shared/backends/embedded/sqlite-session-store.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RedisSessionStore } from '../../shared/backends/redis/sessions/redis-session-store.js';
import { redisForFile } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import { tempDatabase } from '../support/temp-database.js';
import { closeTracked, track } from '../support/tracked.js';
import { sessionStoreContract, type SessionStoreOptions } from './session-store.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();

sessionStoreContract('SqliteSessionStore', async (options = {}) => {
  const temp = track(tempDatabase(), (t) => t.close());
  const open = () => track(new SqliteSessionStore(temp.db, { idleTimeoutMs: options.idleTimeoutMs }), (s) => s.close());
  return {
    store: open(),
    reopen: async () => open(),
    close: closeTracked,
  };
});

const redisStore = (target: () => string | RedisTarget) => async (options: SessionStoreOptions = {}) => {
  /** A store on connections of its own, as each process has. */
  const open = async () => {
    const connections = track(new RedisConnections(target()), (c) => c.close());
    await connections.ready(5_000);
    return { connections, store: track(new RedisSessionStore(connections, { idleTimeoutMs: options.idleTimeoutMs }), (s) => s.close()) };
  };
  const { connections, store } = await open();
  // A listener registered on the store SUBSCRIBEs on the shared subscriber connection.
  return { store, listening: () => connections.subscriptions.confirmed(), reopen: async () => (await open()).store, close: closeTracked };
};

sessionStoreContract('RedisSessionStore', redisStore(() => redis.server.url));
sessionStoreContract('RedisSessionStore on a Redis Cluster', redisStore(() => cluster.cluster.target));
