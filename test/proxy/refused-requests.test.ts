import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { RefusedRequests, type RefusedRequest } from '../../proxy/pipeline/refused-requests.js';

const MINUTE = 60_000;
const START = Date.UTC(2026, 10, 27, 9, 0, 0);

/** An access-log sink that keeps what it is given (the store behind it is not under test). */
function keepingSink(): AccessLogSink & { records: AccessLogEntry[] } {
  const records: AccessLogEntry[] = [];
  return { records, write: (record) => void records.push(record), flush: async () => {}, close: async () => {}, shipped: 0, dropped: 0 };
}

function refused(overrides: Partial<RefusedRequest> = {}): RefusedRequest {
  return { serviceId: 'svc', method: 'GET', target: '/app/x', host: null, ipAddress: '198.18.0.7', statusCode: 429, timestamp: START, responseTimeMs: 1, requestId: null, ...overrides };
}

describe('refused requests are access-logged as one summary per address, service and minute', () => {
  it('counts a flood from one address into one record carrying the first request and the count', () => {
    const sink = keepingSink();
    const summaries = new RefusedRequests(sink, () => START);
    summaries.add(refused({ target: '/app/first', method: 'POST', requestId: '0123456789abcdef' }));
    for (let i = 1; i < 1000; i++) summaries.add(refused({ target: `/app/${i}`, timestamp: START + i }));
    assert.equal(sink.records.length, 0, 'nothing written before the minute ends');
    summaries.close();
    assert.equal(sink.records.length, 1);
    const [summary] = sink.records;
    assert.equal(summary!.count, 1000);
    assert.equal(summary!.path, '/app/first');
    assert.equal(summary!.method, 'POST');
    assert.equal(summary!.timestamp, START);
    assert.equal(summary!.statusCode, 429);
    assert.equal(summary!.userId, null);
    assert.equal(summary!.requestId, '0123456789abcdef', "the first request's id");
  });

  it('keeps addresses and services apart, and starts a new summary in the next minute', () => {
    const sink = keepingSink();
    const summaries = new RefusedRequests(sink, () => START);
    summaries.add(refused());
    summaries.add(refused({ ipAddress: '198.18.0.8' }));
    summaries.add(refused({ serviceId: 'other' }));
    summaries.add(refused({ timestamp: START + MINUTE }));
    assert.equal(sink.records.length, 1, 'the first minute of 198.18.0.7 on svc is written as the next begins');
    summaries.add(refused({ timestamp: START + MINUTE + 1 }));
    summaries.close();
    const counts = sink.records.map((r) => `${r.ipAddress} ${r.serviceId} ${(r.timestamp - START) / MINUTE | 0} ${r.count}`).sort();
    assert.deepEqual(counts, ['198.18.0.7 other 0 1', '198.18.0.7 svc 0 1', '198.18.0.7 svc 1 2', '198.18.0.8 svc 0 1']);
  });

  it('writes the minute\'s summaries when it ends, without waiting for more requests', async () => {
    const sink = keepingSink();
    const now = Date.now();
    // Started 10 ms before its minute ends, so the timer fires within the test.
    const minuteEnd = (Math.floor(now / MINUTE) + 1) * MINUTE;
    const clockOffset = minuteEnd - 10 - now;
    const summaries = new RefusedRequests(sink, () => Date.now() + clockOffset);
    summaries.add(refused({ timestamp: minuteEnd - 10 }));
    summaries.add(refused({ timestamp: minuteEnd - 5 }));
    const written = new Promise<void>((resolve) => {
      const write = sink.write;
      sink.write = (record) => {
        write(record);
        resolve();
      };
    });
    // The summaries' timer is unref'd (it must not hold a stopping process): this one holds the test.
    let guard: NodeJS.Timeout | undefined;
    await Promise.race([written, new Promise((_, reject) => (guard = setTimeout(() => reject(new Error('no summary within 5 s of the minute\'s end')), 5_000)))]);
    clearTimeout(guard);
    assert.equal(sink.records.length, 1);
    assert.equal(sink.records[0]!.count, 2);
    summaries.close();
    assert.equal(sink.records.length, 1, 'nothing left to write');
  });

  it("names the first request's host (a service on several hosts gets one summary), and none for a host-less service", () => {
    const sink = keepingSink();
    const summaries = new RefusedRequests(sink, () => START);
    summaries.add(refused({ host: 'a.apps.example.com' }));
    summaries.add(refused({ host: 'b.apps.example.com', timestamp: START + 1 }));
    summaries.add(refused({ serviceId: 'hostless' }));
    summaries.close();
    const byService = new Map(sink.records.map((r) => [r.serviceId, r]));
    assert.equal(byService.get('svc')!.host, 'a.apps.example.com');
    assert.equal(byService.get('svc')!.count, 2);
    assert.equal('host' in byService.get('hostless')!, false, 'the field travels only with a host');
  });

  it('stores the first request\'s path cut to 2,048 bytes and says so', () => {
    const sink = keepingSink();
    const summaries = new RefusedRequests(sink, () => START);
    summaries.add(refused({ target: `/app/${'A'.repeat(15_000)}` }));
    summaries.close();
    assert.equal(sink.records[0]!.pathTruncated, true);
    assert.equal(sink.records[0]!.path.length, 2049);
  });

  it('holds at most 10,000 summaries: a client spread over more addresses gets them written early, none lost', () => {
    const sink = keepingSink();
    const summaries = new RefusedRequests(sink, () => START);
    for (let i = 0; i < 10_001; i++) summaries.add(refused({ ipAddress: `2001:db8::${i.toString(16)}` }));
    assert.equal(sink.records.length, 10_000, 'the first 10,000 written when the next address came');
    summaries.close();
    assert.equal(sink.records.reduce((sum, r) => sum + r.count!, 0), 10_001);
  });
});
