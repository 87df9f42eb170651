/**
 * The EventBus contract (shared/backends/event-bus.ts), run against every implementation. A
 * publisher and a subscriber may be one object (embedded) or two processes' objects (Redis). Not a
 * test file.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { Service } from '../../shared/types.js';
import { Recorder } from '../support/recorder.js';
import { SUITE } from '../support/redis.js';
import { sampleAssertionKeySet, sampleService } from '../support/samples.js';

/** A publishing bus, a way to get subscribing buses (the admin's and the workers'), and disposal. */
export interface EventBusFixture {
  publisher: EventBus;
  /** A bus as another process would have it (the same object for an in-process bus). */
  subscriber(): Promise<EventBus>;
  close(): Promise<void>;
}

type Snapshot = readonly Service[];
const ids = (services: Snapshot) => services.map((s) => s.id).join(',');
const kidOf = (keys: AssertionKeySet) => keys.signing.kid;

export function eventBusContract(name: string, factory: () => Promise<EventBusFixture>): void {
  describe(`EventBus contract: ${name}`, SUITE, () => {
    let fixture: EventBusFixture;
    beforeEach(async () => {
      fixture = await factory();
    });
    afterEach(async () => {
      await fixture.close();
    });

    it('a subscriber hears nothing before the first publication, then the whole snapshot, field for field', async () => {
      const bus = await fixture.subscriber();
      const heard = new Recorder<Snapshot>();
      bus.onRegistry(heard.listener);
      assert.equal(heard.values.length, 0);
      const services = [sampleService(1), sampleService(2, { enabled: false, description: 'two' })];
      await fixture.publisher.publishRegistry(services);
      assert.deepEqual(await heard.next((s) => s.length === 2), services);
    });

    it('a subscriber added after a publication gets the latest snapshot', async () => {
      await fixture.publisher.publishRegistry([sampleService(1)]);
      await fixture.publisher.publishRegistry([sampleService(1), sampleService(3)]);
      const bus = await fixture.subscriber();
      const heard = new Recorder<Snapshot>();
      bus.onRegistry(heard.listener);
      assert.equal(ids(await heard.next((s) => s.length === 2)), ids([sampleService(1), sampleService(3)]));
    });

    it('once loaded, a new listener is called at once (synchronously) with the current snapshot', async () => {
      const bus = await fixture.subscriber();
      const first = new Recorder<Snapshot>();
      bus.onRegistry(first.listener);
      await fixture.publisher.publishRegistry([sampleService(7)]);
      await first.next((s) => s.length === 1);
      const second = new Recorder<Snapshot>();
      bus.onRegistry(second.listener);
      assert.equal(second.values.length, 1);
      assert.equal(ids(second.values[0]!), sampleService(7).id);
    });

    it('successive publications arrive in order and end at the last one, an empty registry included', async () => {
      const bus = await fixture.subscriber();
      const heard = new Recorder<Snapshot>();
      bus.onRegistry(heard.listener);
      const snapshots = [1, 2, 3, 4, 5].map((n) => Array.from({ length: n }, (_, i) => sampleService(i + 1)));
      for (const snapshot of snapshots) await fixture.publisher.publishRegistry(snapshot);
      await heard.next((s) => s.length === 5);
      const sizes = heard.values.map((s) => s.length);
      assert.deepEqual(sizes, [...sizes].sort((x, y) => x - y), `never an older snapshot after a newer one: ${sizes}`);
      assert.equal(new Set(sizes).size, sizes.length, `no snapshot twice: ${sizes}`);
      await fixture.publisher.publishRegistry([]);
      assert.deepEqual(await heard.next((s) => s.length === 0), []);
    });

    it('every listener hears each snapshot; one that unsubscribed hears no more', async () => {
      const bus = await fixture.subscriber();
      const [kept, dropped] = [new Recorder<Snapshot>(), new Recorder<Snapshot>()];
      bus.onRegistry(kept.listener);
      const unsubscribe = bus.onRegistry(dropped.listener);
      await fixture.publisher.publishRegistry([sampleService(1)]);
      await Promise.all([kept.next((s) => s.length === 1), dropped.next((s) => s.length === 1)]);
      unsubscribe();
      await fixture.publisher.publishRegistry([sampleService(1), sampleService(2)]);
      await kept.next((s) => s.length === 2);
      assert.equal(dropped.values.length, 1);
    });

    it('assertion key sets: nothing before the first, then the whole set (private key included), field for field', async () => {
      const bus = await fixture.subscriber();
      const heard = new Recorder<AssertionKeySet>();
      bus.onAssertionKeys(heard.listener);
      assert.equal(heard.values.length, 0);
      const keys = await sampleAssertionKeySet(2);
      await fixture.publisher.publishAssertionKeys(keys);
      assert.deepEqual(await heard.next((k) => kidOf(k) === kidOf(keys)), keys);
    });

    it('assertion key sets: a subscriber added later gets the latest at once (synchronously), then every newer one', async () => {
      const [first, second, third] = await Promise.all([sampleAssertionKeySet(), sampleAssertionKeySet(1), sampleAssertionKeySet(1)]);
      await fixture.publisher.publishAssertionKeys(first!);
      await fixture.publisher.publishAssertionKeys(second!);
      const bus = await fixture.subscriber();
      const early = new Recorder<AssertionKeySet>();
      bus.onAssertionKeys(early.listener);
      await early.next((k) => kidOf(k) === kidOf(second!));
      const late = new Recorder<AssertionKeySet>();
      bus.onAssertionKeys(late.listener);
      assert.deepEqual(late.values.map(kidOf), [kidOf(second!)]);
      await fixture.publisher.publishAssertionKeys(third!);
      await late.next((k) => kidOf(k) === kidOf(third!));
      assert.ok(!late.values.some((k) => kidOf(k) === kidOf(first!)), 'never an older set');
    });

    it('the registry and the key sets are apart: each publication reaches only its own listeners', async () => {
      const bus = await fixture.subscriber();
      const [services, keySets] = [new Recorder<Snapshot>(), new Recorder<AssertionKeySet>()];
      bus.onRegistry(services.listener);
      bus.onAssertionKeys(keySets.listener);
      const keys = await sampleAssertionKeySet();
      await fixture.publisher.publishAssertionKeys(keys);
      await keySets.next((k) => kidOf(k) === kidOf(keys));
      await fixture.publisher.publishRegistry([sampleService(4)]);
      await services.next((s) => s.length === 1);
      assert.equal(services.values.length, 1, 'a key set is no registry snapshot');
      assert.equal(keySets.values.length, 1, 'a registry snapshot is no key set');
    });
  });
}
