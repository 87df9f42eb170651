/**
 * The access-log pipeline contract: what the data plane writes to its AccessLogSink reaches the
 * admin's AccessLogStore (SQLite) exactly once, whatever sits in between (embedded: nothing;
 * Redis: a stream and a consumer group). Not a test file.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import { eventually } from '../support/eventually.js';
import { SUITE } from '../support/redis.js';
import { LOG_SERVICE, sampleEntry } from '../support/samples.js';
import { type TempDatabase, tempDatabase } from '../support/temp-database.js';

/** A sink wired to a store over `database`; `drained` resolves once everything shipped is stored. */
export interface AccessLogPipeline {
  sink: AccessLogSink;
  drained(): Promise<void>;
  close(): Promise<void>;
}

export function accessLogContract(name: string, factory: (database: TempDatabase) => Promise<AccessLogPipeline>): void {
  describe(`access-log pipeline contract: ${name}`, SUITE, () => {
    let database: TempDatabase;
    let pipeline: AccessLogPipeline;
    beforeEach(async () => {
      database = tempDatabase();
      pipeline = await factory(database);
    });
    afterEach(async () => {
      await pipeline.close();
      database.close();
    });

    /** Flushes the sink and waits until the store has everything. */
    const settle = async () => {
      await pipeline.sink.flush();
      await pipeline.drained();
    };

    it('records written arrive in the store, field for field; write returns at once and never throws', async () => {
      const entries = [
        sampleEntry(1, { target: 'http://10.0.0.2:8080/base', host: 'a.apps.example.com', requestId: '9f86d081884c7d65' }),
        sampleEntry(3, { userId: null, statusCode: 503 }),
        // A traced request: its id is its trace id (design.md §3.10).
        sampleEntry(4, { method: 'DELETE', target: null, requestId: '4bf92f3577b34da6a3ce929d0e0e4736', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' }),
        // A summary of refused requests whose path was cut (the proxy's rate limit, design.md §3.9), its id a trusted proxy's.
        sampleEntry(5, { statusCode: 429, count: 37, pathTruncated: true, host: 'app.example.com', requestId: 'lb-01:Root=1-67891233' }),
      ];
      for (const entry of entries) assert.equal(pipeline.sink.write(entry), undefined);
      await settle();
      const { logs, total } = database.accessLogs.listForService(LOG_SERVICE, 100, 0);
      assert.equal(total, entries.length, 'a summary is one record');
      const byPath = new Map(logs.map((log) => [log.path, log]));
      for (const entry of entries) {
        assert.deepEqual({ ...byPath.get(entry.path)!, id: 0 }, {
          id: 0,
          service_id: entry.serviceId,
          user_id: entry.userId,
          path: entry.path,
          method: entry.method,
          status_code: entry.statusCode,
          response_time_ms: entry.responseTimeMs,
          ip_address: entry.ipAddress,
          timestamp: new Date(entry.timestamp).toISOString(),
          target: entry.target ?? null,
          host: entry.host ?? null,
          protocol: entry.protocol ?? 'http/1.1',
          count: entry.count ?? 1,
          path_truncated: entry.pathTruncated ?? false,
          request_id: entry.requestId ?? null,
          trace_id: entry.traceId ?? null,
          span_id: entry.spanId ?? null,
        });
      }
      assert.equal(pipeline.sink.shipped, entries.length);
      assert.equal(pipeline.sink.dropped, 0);
    });

    it('many batches\' worth of records all arrive, none twice', async () => {
      const paths: string[] = [];
      for (let n = 0; n < 1_234; n++) {
        const entry = sampleEntry(n);
        paths.push(entry.path);
        pipeline.sink.write(entry);
      }
      await settle();
      assert.deepEqual(database.storedPaths().sort(), paths.sort());
    });

    it('the batch timer ships records without a flush', async () => {
      pipeline.sink.write(sampleEntry(1));
      await eventually('the record to be shipped by the timer', () => pipeline.sink.shipped === 1, 2_000);
      await pipeline.drained();
      assert.equal(database.storedPaths().length, 1);
    });

    it('a record delivered twice (same eventId) is stored once', async () => {
      const entry = sampleEntry(1);
      pipeline.sink.write(entry);
      await settle();
      pipeline.sink.write({ ...entry });
      await settle();
      assert.deepEqual(database.storedPaths(), [entry.path]);
    });

    it('close ships what is buffered; records written after close are dropped and counted', async () => {
      pipeline.sink.write(sampleEntry(1));
      pipeline.sink.write(sampleEntry(2));
      await pipeline.sink.close();
      pipeline.sink.write(sampleEntry(3));
      await pipeline.drained();
      assert.equal(database.storedPaths().length, 2);
      assert.equal(pipeline.sink.shipped, 2);
      assert.equal(pipeline.sink.dropped, 1);
    });
  });
}
