/**
 * Target health reports on the EventBus: the contract against MemoryEventBus (embedded) and
 * RedisEventBus on a single redis-server, a Redis Cluster and a Sentinel group (separate
 * "processes"); then what only Redis does: the channel subscribed only while a listener is left,
 * and a publication with Redis away rejected with its error type.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { MemoryEventBus } from '../../shared/backends/embedded/memory-event-bus.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RedisUnavailableError } from '../../shared/backends/redis/connection/redis-errors.js';
import { RedisEventBus } from '../../shared/backends/redis/event-bus/redis-event-bus.js';
import { TARGET_HEALTH_CHANNEL } from '../../shared/backends/redis/redis-keys.js';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import { SENTINEL_GROUP, startSentinelGroup, type SentinelGroup } from '../support/redis-sentinel.js';
import { closeTracked, track } from '../support/tracked.js';
import { sampleReport, targetHealthContract } from './target-health.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();
let sentinel: SentinelGroup;
before(async () => {
  sentinel = await startSentinelGroup(0, 1);
});
after(() => sentinel.close());

targetHealthContract('MemoryEventBus', async () => {
  const bus = new MemoryEventBus();
  return { publisher: bus, subscriber: async () => ({ bus, listening: async () => {} }), close: () => bus.close() };
});

/**
 * Buses on their own connections to `target`; raw payloads go through a plain connection to the
 * node at `rawUrl`, one connection so that they arrive in the order written (a Cluster client sends
 * each PUBLISH to any node).
 */
const redisBuses = (target: () => string | RedisTarget, rawUrl: () => string) => async () => {
  const open = async () => {
    const connections = track(new RedisConnections(target()), (c) => c.close());
    await connections.ready(5_000);
    const bus = track(new RedisEventBus(connections), (b) => b.close());
    return { bus, listening: () => connections.subscriptions.confirmed() };
  };
  const raw = track(new Redis(rawUrl(), { maxRetriesPerRequest: 0 }), (r) => r.disconnect());
  return {
    publisher: (await open()).bus,
    subscriber: open,
    publishRaw: async (payload: string) => void (await raw.publish(TARGET_HEALTH_CHANNEL, payload)),
    close: closeTracked,
  };
};

targetHealthContract('RedisEventBus', redisBuses(() => redis.server.url, () => redis.server.url));
targetHealthContract('RedisEventBus on a Redis Cluster', redisBuses(() => cluster.cluster.target, () => cluster.cluster.nodes[0]!.url));
targetHealthContract(
  'RedisEventBus through Redis Sentinel',
  redisBuses(
    () => ({
      kind: 'sentinel',
      sentinels: sentinel.sentinels.split(',').map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
      name: SENTINEL_GROUP,
      sentinelPassword: undefined,
      username: undefined,
      password: undefined,
      tls: undefined,
    }),
    () => sentinel.primary.url,
  ),
);

describe('RedisEventBus target health: the channel', SUITE, () => {
  const subscribers = () => redis.raw.pubsub('NUMSUB', TARGET_HEALTH_CHANNEL).then((reply) => Number((reply as [string, number])[1]));

  it('is subscribed only while the bus has a listener: a proxy that only publishes hears no reports', async () => {
    const connections = track(new RedisConnections(redis.server.url), (c) => c.close());
    const bus = track(new RedisEventBus(connections), (b) => b.close());
    await connections.ready(5_000);
    await bus.publishTargetHealth(sampleReport('proxy:1'));
    assert.equal(await subscribers(), 0);
    const stops = [bus.onTargetHealth(() => {}), bus.onTargetHealth(() => {})];
    await connections.subscriptions.confirmed();
    assert.equal(await subscribers(), 1, 'one SUBSCRIBE for every listener');
    stops[0]!();
    assert.equal(await subscribers(), 1);
    stops[1]!();
    await eventually('the last listener to UNSUBSCRIBE', async () => (await subscribers()) === 0);
  });

  it('a publication while Redis is unreachable rejects at once with RedisUnavailableError, naming no payload', async () => {
    const connections = track(new RedisConnections(`redis://127.0.0.1:${await freePort()}`), (c) => c.close());
    const bus = track(new RedisEventBus(connections), (b) => b.close());
    const started = Date.now();
    await assert.rejects(bus.publishTargetHealth(sampleReport('proxy:1')), (error: unknown) => {
      assert.ok(error instanceof RedisUnavailableError);
      assert.equal(error.code, 'REDIS_UNAVAILABLE');
      assert.doesNotMatch(error.message, /proxy:1|10\.0\.0\.1/);
      return true;
    });
    assert.ok(Date.now() - started < 1_000, 'no wait for a reconnect');
  });
});
