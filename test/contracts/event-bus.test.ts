/** The EventBus contract against MemoryEventBus (embedded) and RedisEventBus (real redis-server, separate "processes"). */
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RedisEventBus } from '../../shared/backends/redis/event-bus/redis-event-bus.js';
import { redisForFile } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import { closeTracked, track } from '../support/tracked.js';
import { eventBusContract } from './event-bus.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();

eventBusContract('MemoryEventBus', async () => {
  const bus = new MemoryEventBus();
  return { publisher: bus, subscriber: async () => bus, close: () => bus.close() };
});

const redisBus = (target: () => string | RedisTarget) => async () => {
  const open = async () => {
    const connections = track(new RedisConnections(target()), (c) => c.close());
    await connections.ready(5_000);
    return track(new RedisEventBus(connections), (bus) => bus.close());
  };
  const publisher = await open();
  return {
    publisher,
    subscriber: () => open(),
    close: closeTracked,
  };
};

eventBusContract('RedisEventBus', redisBus(() => redis.server.url));
eventBusContract('RedisEventBus on a Redis Cluster', redisBus(() => cluster.cluster.target));
