/**
 * The Redis access-log pipeline beyond the contract (design.md §2.1): the stream's shape
 * and bound, records buffered while Redis is down, dead consumers' pending entries, store
 * failures, malformed entries, and stopping.
 */
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { AccessLogEntry } from '../../shared/types.js';
import type { StoreAccessLogs } from '../../shared/backends/access-log-batch.js';
import { AccessLogStreamConsumer, type AccessLogStreamConsumerOptions } from '../../shared/backends/redis/access-log/access-log-stream-consumer.js';
import { RedisAccessLogSink, type RedisAccessLogSinkOptions } from '../../shared/backends/redis/access-log/redis-access-log-sink.js';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { ACCESS_LOG_GROUP, ACCESS_LOG_STREAM } from '../../shared/backends/redis/redis-keys.js';
import { eventually } from '../support/eventually.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { sampleEntry } from '../support/samples.js';
import { type TempDatabase, tempDatabase } from '../support/temp-database.js';
import { track } from '../support/tracked.js';

const redis = redisForFile();
let database: TempDatabase;

beforeEach(() => {
  database = track(tempDatabase(), (d) => d.close());
});

async function connections(): Promise<RedisConnections> {
  const opened = track(new RedisConnections(redis.server.url, { maxReconnectDelayMs: 100 }), (c) => c.close());
  await opened.ready(5_000);
  return opened;
}

async function workerSink(options: RedisAccessLogSinkOptions = {}): Promise<{ sink: RedisAccessLogSink; connections: RedisConnections }> {
  const opened = await connections();
  const sink = track(new RedisAccessLogSink(opened, options), (s) => s.close());
  return { sink, connections: opened };
}

async function adminConsumer(options: AccessLogStreamConsumerOptions = {}, store?: StoreAccessLogs): Promise<AccessLogStreamConsumer> {
  const store_ = store ?? database.storeAccessLogs;
  const consumer = track(new AccessLogStreamConsumer(await connections(), store_, options), (c) => c.stop());
  consumer.start();
  return consumer;
}

/** Entries `from`..`to - 1`. */
function entries(from: number, to: number): AccessLogEntry[] {
  return Array.from({ length: to - from }, (_, i) => sampleEntry(from + i));
}

describe('the access-log stream', SUITE, () => {
  it('holds one entry per batch, field `records` = the batch as JSON', async () => {
    const { sink } = await workerSink({ maxBatch: 2 });
    const written = entries(0, 5);
    written.forEach((entry) => sink.write(entry));
    await sink.flush();
    const stream = await redis.raw.xrange(ACCESS_LOG_STREAM, '-', '+');
    assert.deepEqual(stream.map(([, fields]) => fields[0]), ['records', 'records', 'records']);
    assert.deepEqual(stream.flatMap(([, fields]) => JSON.parse(fields[1]!) as AccessLogEntry[]), written);
  });

  it('is bounded with MAXLEN ~ while nobody consumes it', async () => {
    const { sink } = await workerSink({ maxBatch: 1, maxStreamLength: 10 });
    entries(0, 1_000).forEach((entry) => sink.write(entry));
    await sink.flush();
    const length = await redis.raw.xlen(ACCESS_LOG_STREAM);
    assert.ok(length >= 10 && length < 1_000, `XLEN ${length}`);
  });

  it('the consumer acknowledges and deletes what it stored: nothing pending, an empty stream', async () => {
    const { sink } = await workerSink();
    const consumer = await adminConsumer();
    entries(0, 30).forEach((entry) => sink.write(entry));
    await sink.flush();
    await consumer.drained();
    assert.equal(database.storedPaths().length, 30);
    assert.equal(consumer.stored, 30);
    assert.equal(await redis.raw.xlen(ACCESS_LOG_STREAM), 0);
    const [pending] = (await redis.raw.xpending(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as [number];
    assert.equal(pending, 0);
  });

  it('entries written before the admin process started are consumed too (group created at id 0)', async () => {
    const { sink } = await workerSink();
    entries(0, 7).forEach((entry) => sink.write(entry));
    await sink.flush();
    const consumer = await adminConsumer();
    await consumer.drained();
    assert.equal(database.storedPaths().length, 7);
  });
});

describe('the access-log pipeline when Redis goes away', SUITE, () => {
  it('records written while Redis is down are buffered and arrive after the restart, none lost or twice', async () => {
    const { sink, connections: worker } = await workerSink({ intervalMs: 20 });
    const consumer = await adminConsumer({ blockMs: 200 });
    entries(0, 10).forEach((entry) => sink.write(entry));
    await sink.flush();
    await consumer.drained();

    await redis.server.kill();
    const during = entries(10, 60);
    during.forEach((entry) => sink.write(entry));
    await sink.flush(); // fails: the records stay buffered
    assert.equal(sink.shipped, 10);
    assert.equal(sink.dropped, 0);

    await redis.server.restart(); // empty: the stream and the group are gone
    await worker.ready(5_000);
    await eventually('the buffered records to be shipped', () => sink.shipped === 60);
    await consumer.drained();
    const stored = database.storedPaths();
    assert.equal(stored.length, 60);
    assert.equal(new Set(stored).size, 60);
    for (const entry of during) assert.ok(stored.includes(entry.path), entry.path);
  });

  it('the buffer is bounded while Redis is down: the oldest records are dropped and counted', async () => {
    const { sink, connections: worker } = await workerSink({ intervalMs: 20, maxBuffered: 10 });
    const consumer = await adminConsumer({ blockMs: 200 });
    await redis.server.kill();
    const written = entries(0, 25);
    written.forEach((entry) => sink.write(entry));
    assert.equal(sink.dropped, 15);
    await redis.server.restart();
    await worker.ready(5_000);
    await eventually('the buffered records to be shipped', () => sink.shipped === 10);
    await consumer.drained();
    assert.deepEqual(database.storedPaths().sort(), written.slice(15).map((entry) => entry.path).sort());
  });

  it('close while Redis is down keeps trying: Redis back within closeTimeoutMs, every record is shipped', async () => {
    const { sink } = await workerSink({ intervalMs: 20, closeTimeoutMs: 10_000 });
    await redis.server.kill();
    entries(0, 5).forEach((entry) => sink.write(entry));
    const closing = sink.close();
    await redis.server.restart();
    await closing;
    assert.equal(sink.shipped, 5);
    assert.equal(sink.dropped, 0);
    assert.equal(await redis.raw.xlen(ACCESS_LOG_STREAM), 1);
  });

  it('close while Redis stays down gives up after closeTimeoutMs: what is left is dropped and counted', async () => {
    const { sink } = await workerSink({ intervalMs: 20, closeTimeoutMs: 300 });
    await redis.server.kill();
    entries(0, 5).forEach((entry) => sink.write(entry));
    const started = Date.now();
    await sink.close();
    assert.ok(Date.now() - started >= 290, 'it tried for closeTimeoutMs');
    assert.equal(sink.shipped, 0);
    assert.equal(sink.dropped, 5);
    sink.write(sampleEntry(6));
    assert.equal(sink.dropped, 6, 'a record written after close is dropped too');
    await redis.server.restart();
  });
});

describe('the access-log consumer group', SUITE, () => {
  it('entries a dead consumer left pending are claimed and stored by another, which then removes it from the group', async () => {
    const { sink } = await workerSink();
    entries(0, 40).forEach((entry) => sink.write(entry));
    await sink.flush();
    await redis.raw.xgroup('CREATE', ACCESS_LOG_STREAM, ACCESS_LOG_GROUP, '0', 'MKSTREAM');
    await redis.raw.xreadgroup('GROUP', ACCESS_LOG_GROUP, 'dead-consumer', 'COUNT', 100, 'STREAMS', ACCESS_LOG_STREAM, '>');
    const [pending] = (await redis.raw.xpending(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as [number];
    assert.ok(pending > 0, 'the dead consumer holds the entries');

    const consumer = await adminConsumer({ claimMinIdleMs: 200, claimIntervalMs: 50, blockMs: 100 });
    await consumer.drained();
    assert.equal(database.storedPaths().length, 40);
    assert.equal(consumer.stored, 40, 'delivered to the new consumer only by claiming');
    const consumerNames = async () =>
      ((await redis.raw.xinfo('CONSUMERS', ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as string[][]).map((info) => info[1]);
    await eventually('the dead consumer to leave the group', async () => (await consumerNames()).length === 1);
    assert.deepEqual(await consumerNames(), [consumer.consumerName]);
  });

  it('after a reconnect it stores its own pending entries at once (a read whose reply was lost), not after claimMinIdleMs', async () => {
    const consumer = await adminConsumer({ claimMinIdleMs: 60_000, blockMs: 100 });
    await consumer.drained();
    let consumerId: string | undefined;
    await eventually('the consumer connection named', async () => {
      consumerId = /id=(\d+) [^\n]*name=gatehouse:access-log-consumer/.exec(String(await redis.raw.client('LIST')))?.[1];
      return consumerId !== undefined;
    });
    // In one step: a batch arrives and Redis delivers it to this consumer, whose connection then
    // drops before the reply reaches it (a failover): the batch is pending on it, unseen.
    const written = entries(0, 6);
    const tx = redis.raw.multi().xadd(ACCESS_LOG_STREAM, '*', 'records', JSON.stringify(written));
    tx.xreadgroup('GROUP', ACCESS_LOG_GROUP, consumer.consumerName, 'COUNT', 10, 'STREAMS', ACCESS_LOG_STREAM, '>');
    tx.client('KILL', 'ID', consumerId!);
    const results = await tx.exec();
    assert.deepEqual(results?.map(([error]) => error), [null, null, null], 'the batch delivered and the connection killed');
    assert.equal(((await redis.raw.xpending(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as [number])[0], 1, 'pending on the consumer');
    const waited = await eventually('the pending batch stored', () => database.storedPaths().length === 6, 5_000);
    assert.ok(waited < 5_000);
    assert.deepEqual(database.storedPaths().sort(), written.map((entry) => entry.path).sort());
    const [pending] = (await redis.raw.xpending(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as [number];
    assert.equal(pending, 0);
  });

  it('a batch whose store threw is delivered again later and stored once', async () => {
    const { sink } = await workerSink();
    let calls = 0;
    const flaky: StoreAccessLogs = (batch) => {
      calls++;
      if (calls === 1) throw new Error('database is locked');
      return database.storeAccessLogs(batch);
    };
    const consumer = await adminConsumer({ claimMinIdleMs: 100, claimIntervalMs: 50, blockMs: 100, retryDelayMs: 10 }, flaky);
    const written = entries(0, 12);
    written.forEach((entry) => sink.write(entry));
    await sink.flush();
    await consumer.drained();
    assert.ok(calls >= 2);
    assert.deepEqual(database.storedPaths().sort(), written.map((entry) => entry.path).sort());
  });

  it('malformed entries and records are acknowledged and skipped; the good ones are stored', async () => {
    const good = entries(0, 3);
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'other', 'x');
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'records', '{not json');
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'records', '{"an":"object"}');
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'records', JSON.stringify([good[0], { ...good[1], statusCode: 'ok' }, { ...good[1], host: 7 }, { eventId: 'x' }]));
    // Ids of the wrong shape: a space in a request id, an uppercase trace id, a short span id.
    const wrongIds = [{ requestId: 'a b' }, { requestId: '4bf92f3577b34da6', traceId: '4BF92F3577B34DA6A3CE929D0E0E4736' }, { spanId: '00f067aa' }];
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'records', JSON.stringify(wrongIds.map((ids) => ({ ...good[1], ...ids }))));
    await redis.raw.xadd(ACCESS_LOG_STREAM, '*', 'records', JSON.stringify([good[2]]));
    const consumer = await adminConsumer();
    await consumer.drained();
    assert.deepEqual(database.storedPaths().sort(), [good[0]!.path, good[2]!.path].sort());
    assert.equal(consumer.skipped, 9);
    assert.equal(await redis.raw.xlen(ACCESS_LOG_STREAM), 0);
  });

  it('stop lets the batch being stored finish and be acknowledged, then resolves', async () => {
    const { sink } = await workerSink();
    let release!: () => void;
    const storing = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const started = new Promise<void>((resolve) => (entered = resolve));
    const slow: StoreAccessLogs = async (batch) => {
      entered();
      await storing;
      return database.storeAccessLogs(batch);
    };
    const consumer = await adminConsumer({ blockMs: 10_000 }, slow);
    entries(0, 5).forEach((entry) => sink.write(entry));
    await sink.flush();
    await started;
    const stopping = consumer.stop().then(() => database.storedPaths().length);
    // Asserting that something does not happen needs a bound: stop must still be waiting after 200 ms.
    const early = await Promise.race([stopping.then(() => 'stopped'), new Promise((resolve) => setTimeout(resolve, 200, 'waiting'))]);
    assert.equal(early, 'waiting', 'stop waits for the batch being stored');
    release();
    assert.equal(await stopping, 5, 'the batch was stored before stop resolved');
    const [pending] = (await redis.raw.xpending(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP)) as [number];
    assert.equal(pending, 0, 'acknowledged before stopping');
  });

  it('entries that arrive while it gathers after a short read are stored with one store call', async () => {
    const { sink } = await workerSink({ maxBatch: 1 });
    const calls: number[] = [];
    const counting: StoreAccessLogs = (batch) => {
      calls.push(batch.count);
      return database.storeAccessLogs(batch);
    };
    const consumer = await adminConsumer({ gatherMs: 1_000 }, counting);
    sink.write(sampleEntry(0));
    await sink.flush();
    await eventually('the first entry to be stored', () => calls.length === 1);
    entries(1, 4).forEach((entry) => sink.write(entry)); // three entries: maxBatch 1
    await sink.flush();
    await consumer.drained();
    assert.deepEqual(calls, [1, 3]);
    assert.equal(database.storedPaths().length, 4);
  });

  it('stop during the gathering pause returns without waiting it out', async () => {
    const { sink } = await workerSink();
    const consumer = await adminConsumer({ gatherMs: 30_000 });
    sink.write(sampleEntry(0));
    await sink.flush();
    await consumer.drained();
    const started = Date.now();
    await consumer.stop();
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
  });

  it('stop of an idle consumer returns without waiting out its blocking read', async () => {
    const consumer = await adminConsumer({ blockMs: 30_000 });
    await eventually('the consumer to wait in XREADGROUP BLOCK', async () => /flags=b .*cmd=xreadgroup/.test(String(await redis.raw.client('LIST'))));
    const started = Date.now();
    await consumer.stop();
    assert.ok(Date.now() - started < 2_000, `${Date.now() - started} ms`);
  });
});
