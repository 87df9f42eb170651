/** The EventBus contract against MemoryEventBus (embedded) and RedisEventBus (real redis-server, separate "processes"). */
import { after, afterEach, before } from 'node:test';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { RedisEventBus } from '../../shared/backends/redis/redis-event-bus.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { eventBusContract } from './event-bus.contract.js';
import { closeTracked, track } from './fixtures.js';

let redis: RedisServer;
before(async () => {
  redis = await startRedis();
});
afterEach(closeTracked);
after(async () => {
  await closeTracked();
  await redis.stop();
});

eventBusContract('MemoryEventBus', async () => {
  const bus = new MemoryEventBus();
  return { publisher: bus, subscriber: async () => bus, close: () => bus.close() };
});

eventBusContract('RedisEventBus', async () => {
  const open = async (flush = false) => {
    const connections = track(new RedisConnections(redis.url), (c) => c.close());
    await connections.ready(5_000);
    if (flush) await connections.command.flushall();
    return track(new RedisEventBus(connections), (bus) => bus.close());
  };
  const publisher = await open(true);
  return {
    publisher,
    subscriber: () => open(),
    close: closeTracked,
  };
});
