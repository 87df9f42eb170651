/**
 * The access-log pipeline contract: embedded (BatchingAccessLogSink → AccessLogStore) and Redis
 * (RedisAccessLogSink → stream → AccessLogStreamConsumer → AccessLogStore), each on a temp SQLite file.
 */
import { after, afterEach, before } from 'node:test';
import { BatchingAccessLogSink } from '../../shared/backends/batching-access-log-sink.js';
import { AccessLogStreamConsumer } from '../../shared/backends/redis/access-log-stream-consumer.js';
import { RedisAccessLogSink } from '../../shared/backends/redis/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { accessLogContract } from './access-log.contract.js';
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

accessLogContract('embedded: BatchingAccessLogSink into AccessLogStore', async (database) => {
  const sink = new BatchingAccessLogSink((batch) => database.accessLogs.insertBatch(batch));
  return { sink, drained: () => sink.flush(), close: () => sink.close() };
});

accessLogContract('Redis: RedisAccessLogSink, stream, AccessLogStreamConsumer', async (database) => {
  const workerSide = track(new RedisConnections(redis.url), (c) => c.close());
  const adminSide = track(new RedisConnections(redis.url), (c) => c.close());
  await Promise.all([workerSide.ready(5_000), adminSide.ready(5_000)]);
  await adminSide.command.flushall();
  const sink = track(new RedisAccessLogSink(workerSide), (s) => s.close());
  const consumer = track(new AccessLogStreamConsumer(adminSide, (batch) => database.accessLogs.insertBatch(batch)), (c) => c.stop());
  consumer.start();
  return { sink, drained: () => consumer.drained(), close: closeTracked };
});
