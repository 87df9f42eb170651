/**
 * The access-log pipeline contract: embedded (BatchingAccessLogSink → AccessLogStore (day files)) and Redis
 * (RedisAccessLogSink → stream → AccessLogStreamConsumer → AccessLogStore), each on a temp SQLite file.
 */
import { BatchingAccessLogSink } from '../../shared/backends/batching-access-log-sink.js';
import { AccessLogStreamConsumer } from '../../shared/backends/redis/access-log-stream-consumer.js';
import { RedisAccessLogSink } from '../../shared/backends/redis/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/redis-connections.js';
import { redisForFile } from '../support/redis.js';
import { closeTracked, track } from '../support/tracked.js';
import { accessLogContract } from './access-log.contract.js';

const redis = redisForFile();

accessLogContract('embedded: BatchingAccessLogSink into AccessLogStore', async (database) => {
  const sink = new BatchingAccessLogSink((records) => database.store.insertBatch(records));
  return { sink, drained: () => sink.flush(), close: () => sink.close() };
});

accessLogContract('Redis: RedisAccessLogSink, stream, AccessLogStreamConsumer', async (database) => {
  const workerSide = track(new RedisConnections(redis.server.url), (c) => c.close());
  const adminSide = track(new RedisConnections(redis.server.url), (c) => c.close());
  await Promise.all([workerSide.ready(5_000), adminSide.ready(5_000)]);
  const sink = track(new RedisAccessLogSink(workerSide), (s) => s.close());
  const consumer = track(new AccessLogStreamConsumer(adminSide, database.storeAccessLogs), (c) => c.stop());
  consumer.start();
  return { sink, drained: () => consumer.drained(), close: closeTracked };
});
