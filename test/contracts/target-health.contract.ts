/**
 * The target health half of the EventBus contract (shared/backends/event-bus.ts
 * `publishTargetHealth`, `onTargetHealth`), run against every implementation: proxy processes
 * publish, the admin plane listens. Not a test file.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { EventBus } from '../../shared/backends/event-bus.js';
import type { TargetHealthReport } from '../../shared/types.js';
import { Recorder } from '../support/recorder.js';
import { SUITE } from '../support/redis.js';

/** A listening bus as another process has it. */
export interface ListeningBus {
  bus: EventBus;
  /** Resolves once every listener added so far hears what is published (Redis: SUBSCRIBE confirmed). */
  listening(): Promise<void>;
}

/** A publishing bus (a proxy's), a way to get another process's bus (the admin's), and disposal. */
export interface TargetHealthFixture {
  publisher: EventBus;
  /** A bus as another process would have it (the same object for an in-process bus). */
  subscriber(): Promise<ListeningBus>;
  /**
   * Writes `payload` on the reports' channel as it is, in the order of the calls (Redis); absent
   * where reports travel as objects (in-process), which no malformed one can reach.
   */
  publishRaw?: (payload: string) => Promise<void>;
  close(): Promise<void>;
}

/** A report of proxy `proxy` made at `at` (epoch ms): two services, one with an error. */
export function sampleReport(proxy: string, at = Date.now()): TargetHealthReport {
  return {
    proxy,
    at,
    services: {
      '11111111-1111-4111-8111-111111111111': [
        { url: 'http://10.0.0.1:8080', state: 'healthy', since: at - 60_000, lastError: null },
        { url: 'http://10.0.0.2:8080/base', state: 'ejected', since: at - 2_000, lastError: 'ECONNREFUSED' },
      ],
      '22222222-2222-4222-8222-222222222222': [{ url: 'https://api.internal', state: 'unhealthy', since: at - 30_000, lastError: 'status 503' }],
    },
  };
}

export function targetHealthContract(name: string, factory: () => Promise<TargetHealthFixture>): void {
  describe(`EventBus target health contract: ${name}`, SUITE, () => {
    let fixture: TargetHealthFixture;
    beforeEach(async () => {
      fixture = await factory();
    });
    afterEach(async () => {
      await fixture.close();
    });

    /** A listener on another process's bus, subscribed. */
    async function listener(): Promise<{ heard: Recorder<TargetHealthReport>; stop: () => void; subscriber: ListeningBus }> {
      const subscriber = await fixture.subscriber();
      const heard = new Recorder<TargetHealthReport>();
      const stop = subscriber.bus.onTargetHealth(heard.listener);
      await subscriber.listening();
      return { heard, stop, subscriber };
    }

    it("a report published by one instance reaches another instance's listener, field for field", async () => {
      const { heard } = await listener();
      const report = sampleReport('web-1:4312');
      await fixture.publisher.publishTargetHealth(report);
      assert.deepEqual(await heard.next((r) => r.proxy === 'web-1:4312'), report);
    });

    it('every listener hears each report; one that unsubscribed hears no more, the others still do', async () => {
      const { heard: kept, subscriber } = await listener();
      const dropped = new Recorder<TargetHealthReport>();
      const unsubscribe = subscriber.bus.onTargetHealth(dropped.listener);
      await fixture.publisher.publishTargetHealth(sampleReport('first:1'));
      await Promise.all([kept.next((r) => r.proxy === 'first:1'), dropped.next((r) => r.proxy === 'first:1')]);
      unsubscribe();
      await fixture.publisher.publishTargetHealth(sampleReport('second:2'));
      await kept.next((r) => r.proxy === 'second:2');
      assert.deepEqual(dropped.values.map((r) => r.proxy), ['first:1']);
    });

    it('after the last listener left, a new one hears the reports published from then on', async () => {
      const first = await listener();
      await fixture.publisher.publishTargetHealth(sampleReport('before:1'));
      await first.heard.next((r) => r.proxy === 'before:1');
      first.stop();
      const heard = new Recorder<TargetHealthReport>();
      first.subscriber.bus.onTargetHealth(heard.listener);
      await first.subscriber.listening();
      await fixture.publisher.publishTargetHealth(sampleReport('after:2'));
      await heard.next((r) => r.proxy === 'after:2');
      assert.deepEqual(heard.values.map((r) => r.proxy), ['after:2'], 'no replay of an earlier report');
      assert.deepEqual(first.heard.values.map((r) => r.proxy), ['before:1']);
    });

    it('a message on the channel that is no report is ignored; a report after it arrives, without fields it does not know', async (t) => {
      const publishRaw = fixture.publishRaw;
      if (!publishRaw) return t.skip('reports travel as objects: nothing malformed can reach a listener');
      const { heard } = await listener();
      const good = sampleReport('good:1');
      const malformed: unknown[] = [
        { ...good, proxy: '' },
        { ...good, at: 'yesterday' },
        { ...good, services: { x: [{ url: 'http://a', state: 'dead', since: 1, lastError: null }] } },
        { ...good, services: { x: [{ url: 'http://a', state: 'healthy', since: 1 }] } },
        { ...good, services: { x: [{ url: 'http://a', state: 'healthy', since: -1, lastError: null }] } },
        { ...good, services: 'none' },
        { proxy: 'no-services:1', at: 1 },
        [],
        null,
      ];
      for (const value of malformed) await publishRaw(JSON.stringify(value));
      await publishRaw('{"proxy": "not json"');
      await publishRaw(JSON.stringify({ ...good, version: 2, services: { x: [{ ...good.services['22222222-2222-4222-8222-222222222222']![0]!, rtt: 3 }] } }));
      const arrived = await heard.next((r) => r.proxy === 'good:1');
      assert.deepEqual(arrived, { ...good, services: { x: good.services['22222222-2222-4222-8222-222222222222'] } });
      assert.equal(heard.values.length, 1, `only the report: ${JSON.stringify(heard.values)}`);
    });
  });
}
