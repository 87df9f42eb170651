/**
 * The access-log pipeline contract: embedded (BatchingAccessLogSink → AccessLogStore (day files)) and Redis
 * (RedisAccessLogSink → stream → AccessLogStreamConsumer → AccessLogStore), each on a temp SQLite file.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BatchingAccessLogSink } from '../../shared/backends/batching-access-log-sink.js';
import { AccessLogStreamConsumer } from '../../shared/backends/redis/access-log/access-log-stream-consumer.js';
import { RedisAccessLogSink } from '../../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { eventually } from '../support/eventually.js';
import { redisForFile } from '../support/redis.js';
import { redisClusterForFile } from '../support/redis-cluster.js';
import type { RedisTarget } from '../../shared/config/redis-target.js';
import { sampleEntry } from '../support/samples.js';
import { tempDatabase } from '../support/temp-database.js';
import { closeTracked, track } from '../support/tracked.js';
import { accessLogContract } from './access-log.contract.js';

const redis = redisForFile();
const cluster = redisClusterForFile();

accessLogContract('embedded: BatchingAccessLogSink into AccessLogStore', async (database) => {
  const sink = new BatchingAccessLogSink((records) => database.store.insertBatch(records));
  return { sink, drained: () => sink.flush(), close: () => sink.close() };
});

const redisPipeline = (target: () => string | RedisTarget) => async (database: Parameters<Parameters<typeof accessLogContract>[1]>[0]) => {
  const workerSide = track(new RedisConnections(target()), (c) => c.close());
  const adminSide = track(new RedisConnections(target()), (c) => c.close());
  await Promise.all([workerSide.ready(5_000), adminSide.ready(5_000)]);
  const sink = track(new RedisAccessLogSink(workerSide), (s) => s.close());
  const consumer = track(new AccessLogStreamConsumer(adminSide, database.storeAccessLogs), (c) => c.stop());
  consumer.start();
  return { sink, drained: () => consumer.drained(), close: closeTracked };
};

accessLogContract('Redis: RedisAccessLogSink, stream, AccessLogStreamConsumer', redisPipeline(() => redis.server.url));
accessLogContract('Redis Cluster: RedisAccessLogSink, stream, AccessLogStreamConsumer', redisPipeline(() => cluster.cluster.target));

describe('a shipment that arrived but was reported failed', () => {
  it('is shipped again exactly as it was, so what arrived meanwhile is stored too and nothing twice', async () => {
    const database = tempDatabase();
    let calls = 0;
    const sink = new BatchingAccessLogSink(
      (records) => {
        database.store.insertBatch(records); // stored (a stream took it, a writer committed it) …
        if (++calls === 1) throw new Error('reply lost'); // … but the sender hears a failure
      },
      { intervalMs: 10 },
    );
    try {
      sink.write(sampleEntry(1));
      await sink.flush();
      sink.write(sampleEntry(2));
      await eventually('both records shipped', () => sink.shipped === 2, 2_000);
      assert.deepEqual(database.storedPaths(), [sampleEntry(1).path, sampleEntry(2).path]);
    } finally {
      await sink.close();
      database.close();
    }
  });
});
