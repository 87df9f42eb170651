/**
 * RedisEventBus beyond the contract (design.md §2.1): the versioned snapshot in Redis,
 * recovery of missed notices (reconnect, periodic version check), and Redis going away.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { RedisEventBus, type RedisEventBusOptions } from '../../shared/backends/redis/event-bus/redis-event-bus.js';
import {
  ASSERTION_KEYS_CHANNEL,
  ASSERTION_KEYS_EPOCH_KEY,
  ASSERTION_KEYS_KEY,
  ASSERTION_KEYS_VERSION_KEY,
  REGISTRY_EPOCH_KEY,
  REGISTRY_KEY,
  REGISTRY_VERSION_KEY,
} from '../../shared/backends/redis/redis-keys.js';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import type { Service } from '../../shared/types.js';
import { eventually } from '../support/eventually.js';
import { Recorder } from '../support/recorder.js';
import { redisForFile, SUITE } from '../support/redis.js';
import { sampleAssertionKeySet, sampleService } from '../support/samples.js';
import { startTcpRelay } from '../support/tcp-relay.js';
import { track } from '../support/tracked.js';

type Snapshot = readonly Service[];

const redis = redisForFile();

/** A bus on its own connections (one process); `url` may point at a relay. */
async function process_(options: RedisEventBusOptions = {}, url = redis.server.url): Promise<{ bus: RedisEventBus; connections: RedisConnections }> {
  const connections = track(new RedisConnections(url, { maxReconnectDelayMs: 100, writeWaitMs: 200 }), (c) => c.close());
  const bus = track(new RedisEventBus(connections, options), (b) => b.close());
  await connections.ready(5_000);
  return { bus, connections };
}

/** Writes a snapshot straight into Redis, as a publisher would, but without the pub/sub notice. */
async function writeSilently(version: number, services: Snapshot): Promise<void> {
  const epoch = await redis.raw.get(REGISTRY_EPOCH_KEY);
  await redis.raw.multi().set(REGISTRY_VERSION_KEY, version).set(REGISTRY_KEY, JSON.stringify({ version, epoch, services })).exec();
}

const names = (services: Snapshot) => services.map((s) => s.name);

describe('RedisEventBus: the snapshot in Redis', SUITE, () => {
  it('each publication INCRs the version and stores {version, epoch, services} atomically', async () => {
    const { bus } = await process_();
    assert.equal(bus.loaded, false);
    assert.equal(bus.version, undefined);
    await bus.publishRegistry([sampleService(1)]);
    await bus.publishRegistry([sampleService(1), sampleService(2)]);
    const stored = JSON.parse((await redis.raw.get(REGISTRY_KEY))!) as { version: number; epoch: string; services: Service[] };
    assert.equal(stored.version, 2);
    assert.equal(await redis.raw.get(REGISTRY_VERSION_KEY), '2');
    assert.equal(stored.epoch, await redis.raw.get(REGISTRY_EPOCH_KEY));
    assert.deepEqual(stored.services, [sampleService(1), sampleService(2)]);
    assert.equal(bus.loaded, true);
    assert.equal(bus.version, 2);
  });

  it('a new process loads the snapshot already in Redis (readiness: loaded)', async () => {
    const admin = await process_();
    await admin.bus.publishRegistry([sampleService(3)]);
    const { bus } = await process_();
    await eventually('the snapshot to load', () => bus.loaded);
    assert.equal(bus.version, 1);
  });

  it('never goes back to an older version of the same epoch, even when told about it', async () => {
    const admin = await process_();
    const worker = await process_({ versionCheckMs: 50 });
    const heard = new Recorder<Snapshot>();
    worker.bus.onRegistry(heard.listener);
    for (const n of [1, 2, 3]) await admin.bus.publishRegistry([sampleService(n)]);
    await heard.next((s) => s[0]?.name === 'Service 3');
    await writeSilently(2, [sampleService(99)]);
    await redis.raw.publish('gatehouse:registry-changed', '2');
    await worker.bus.refresh();
    assert.equal(worker.bus.version, 3);
    assert.ok(!heard.values.some((s) => s[0]?.name === 'Service 99'));
  });
});

describe('RedisEventBus: the assertion keys in Redis', SUITE, () => {
  it('have a versioned snapshot of their own, which a process started later loads', async () => {
    const admin = await process_();
    const keys = await sampleAssertionKeySet(1);
    await admin.bus.publishAssertionKeys(keys);
    await admin.bus.publishRegistry([sampleService(1)]);
    const stored = JSON.parse((await redis.raw.get(ASSERTION_KEYS_KEY))!) as { version: number; keySet: AssertionKeySet };
    assert.equal(stored.version, 1);
    assert.equal(await redis.raw.get(ASSERTION_KEYS_VERSION_KEY), '1');
    assert.deepEqual(stored.keySet, keys);
    assert.equal(admin.bus.version, 1, 'the registry counts its own versions');

    const { bus } = await process_();
    await eventually('the key set to load', () => bus.assertionKeysLoaded);
    const heard = new Recorder<AssertionKeySet>();
    bus.onAssertionKeys(heard.listener);
    assert.deepEqual(heard.values, [keys]);
  });

  it('a stored value that is no key set is ignored: the current set stays', async () => {
    const admin = await process_();
    const worker = await process_({ versionCheckMs: 50 });
    const heard = new Recorder<AssertionKeySet>();
    worker.bus.onAssertionKeys(heard.listener);
    const keys = await sampleAssertionKeySet();
    await admin.bus.publishAssertionKeys(keys);
    await heard.next((k) => k.signing.kid === keys.signing.kid);
    const epoch = await redis.raw.get(ASSERTION_KEYS_EPOCH_KEY);
    const noKeys = { signing: { ...keys.signing, alg: 'none' }, published: keys.published };
    await redis.raw.multi().set(ASSERTION_KEYS_VERSION_KEY, 2).set(ASSERTION_KEYS_KEY, JSON.stringify({ version: 2, epoch, keySet: noKeys })).exec();
    await redis.raw.publish(ASSERTION_KEYS_CHANNEL, '2');
    await worker.bus.refresh();
    assert.deepEqual(heard.values, [keys]);
  });
});

describe('RedisEventBus: listeners', SUITE, () => {
  it('a listener that throws neither fails the publication nor keeps other listeners from hearing it', async () => {
    const { bus } = await process_();
    bus.onRegistry(() => {
      throw new Error('listener bug');
    });
    const heard = new Recorder<Snapshot>();
    bus.onRegistry(heard.listener);
    await bus.publishRegistry([sampleService(4)]);
    assert.deepEqual(names(heard.values[0]!), ['Service 4'], 'its own publication reaches it before publishRegistry resolves');
  });
});

describe('RedisEventBus: missed notices', SUITE, () => {
  it('the periodic version check catches a snapshot whose notice never came', async () => {
    const admin = await process_();
    await admin.bus.publishRegistry([sampleService(1)]);
    const worker = await process_({ versionCheckMs: 100 });
    const heard = new Recorder<Snapshot>();
    worker.bus.onRegistry(heard.listener);
    await heard.next((s) => s.length === 1);
    await writeSilently(2, [sampleService(1), sampleService(2)]); // no PUBLISH: a dropped message
    assert.deepEqual(names(await heard.next((s) => s.length === 2, 2_000)), ['Service 1', 'Service 2']);
    assert.equal(worker.bus.version, 2);
  });

  it('a worker cut off from Redis sees, once reconnected, a change published meanwhile', async () => {
    const relay = track(await startTcpRelay(redis.server.port), (r) => r.close());
    const admin = await process_();
    // A version check once a minute: only the re-read on reconnect can explain the update.
    const worker = await process_({ versionCheckMs: 60_000 }, relay.url);
    const heard = new Recorder<Snapshot>();
    worker.bus.onRegistry(heard.listener);
    await admin.bus.publishRegistry([sampleService(1)]);
    await heard.next((s) => s.length === 1);

    relay.cut();
    await eventually('the worker to notice', () => worker.connections.command.status !== 'ready');
    await admin.bus.publishRegistry([sampleService(1), sampleService(2)]);
    assert.equal(heard.values.length, 1, 'nothing reaches a disconnected worker');
    relay.restore();
    assert.deepEqual(names(await heard.next((s) => s.length === 2, 10_000)), ['Service 1', 'Service 2']);
  });
});

describe('RedisEventBus when Redis goes away', SUITE, () => {
  it('workers keep their last snapshot while Redis is down, and everything recovers after a restart', async () => {
    const admin = await process_();
    const worker = await process_({ versionCheckMs: 50 });
    const heard = new Recorder<Snapshot>();
    worker.bus.onRegistry(heard.listener);
    await admin.bus.publishRegistry([sampleService(1), sampleService(2)]);
    await heard.next((s) => s.length === 2);

    await redis.server.kill();
    await eventually('the worker to notice', () => worker.connections.command.status !== 'ready');
    await worker.bus.refresh(); // a read that fails
    assert.equal(worker.bus.loaded, true);
    const late = new Recorder<Snapshot>();
    worker.bus.onRegistry(late.listener);
    assert.deepEqual(names(late.values[0]!), ['Service 1', 'Service 2'], 'the last snapshot is still served');
    await assert.rejects(admin.bus.publishRegistry([sampleService(3)]), { code: 'REDIS_UNAVAILABLE' });
    assert.deepEqual(heard.values.map((s) => s.length), [2]);

    await redis.server.restart(); // empty: the snapshot, version and epoch are gone
    // The admin re-publishes the snapshot whose publication failed, by itself, on reconnect.
    assert.deepEqual(names(await heard.next((s) => s.length === 1 && s[0]?.name === 'Service 3', 5_000)), ['Service 3']);
    assert.ok(await redis.raw.exists(REGISTRY_KEY));
    await admin.bus.publishRegistry([sampleService(3), sampleService(4)]);
    await heard.next((s) => s.length === 2 && s[1]?.name === 'Service 4', 2_000);
  });

  it('after Redis lost its data, the admin re-creates the snapshot it last published', async () => {
    const admin = await process_();
    await admin.bus.publishRegistry([sampleService(5)]);
    await redis.server.restart();
    await admin.connections.ready(5_000);
    await eventually('the snapshot to be re-created', async () => (await redis.raw.exists(REGISTRY_KEY).catch(() => 0)) === 1);
    const { bus } = await process_();
    await eventually('a new worker to load it', () => bus.loaded);
    const heard = new Recorder<Snapshot>();
    bus.onRegistry(heard.listener);
    assert.deepEqual(names(heard.values[0]!), ['Service 5']);
  });

  it('a counter restarted by a new admin after Redis lost its data is taken, though its version is lower', async () => {
    const firstAdmin = await process_();
    const worker = await process_({ versionCheckMs: 50 });
    const heard = new Recorder<Snapshot>();
    worker.bus.onRegistry(heard.listener);
    for (const n of [1, 2, 3]) await firstAdmin.bus.publishRegistry([sampleService(n)]);
    await heard.next((s) => s[0]?.name === 'Service 3');
    await firstAdmin.bus.close(); // the admin process is gone too: nobody re-publishes
    await firstAdmin.connections.close();

    await redis.server.restart();
    await worker.connections.ready(5_000);
    const secondAdmin = await process_();
    await secondAdmin.bus.publishRegistry([sampleService(8)]);
    assert.equal(secondAdmin.bus.version, 1);
    await heard.next((s) => s[0]?.name === 'Service 8', 2_000);
    assert.equal(worker.bus.version, 1);
  });
});
