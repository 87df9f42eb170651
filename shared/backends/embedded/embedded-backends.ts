import type { Database } from 'better-sqlite3';
import type { Backends, StoreAccessLogs } from '../backends.js';
import { BatchingAccessLogSink } from '../batching-access-log-sink.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { MemoryEventBus } from './memory-event-bus.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { SqliteSessionStore } from './sqlite-session-store.js';

/**
 * Embedded {@link Backends} (DESIGN §2): sessions in the gateway's SQLite file, an in-process
 * event bus, in-memory rate limits, and access-log batches handed straight to the batch writer.
 */
export function openEmbeddedBackends(config: Config, db: Database, logger: Logger): Backends {
  const sessions = new SqliteSessionStore(db);
  const bus = new MemoryEventBus();
  return {
    sessions,
    bus,
    generalLimiter: new MemoryRateLimiter(config.rateLimitGeneral),
    authLimiter: new MemoryRateLimiter(config.rateLimitAuth),
    accessLogSink(store?: StoreAccessLogs) {
      if (!store) throw new Error('the embedded access-log sink needs the SQLite batch writer');
      return new BatchingAccessLogSink(store, {
        onError: (err) => logger.error({ err }, 'storing access-log batch failed; will retry'),
      });
    },
    consumeAccessLogs: () => ({ stop: async () => {} }),
    readiness: [],
    async close() {
      await sessions.close();
      await bus.close();
    },
  };
}
