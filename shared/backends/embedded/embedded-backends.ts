import type { Backends, SqliteStorage } from '../backends.js';
import { batchOf } from '../access-log-batch.js';
import { BatchingAccessLogSink, type BatchingOptions } from '../batching-access-log-sink.js';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../logger.js';
import { MemoryEventBus } from './memory-event-bus.js';
import { MemoryRateLimiter } from './memory-rate-limiter.js';
import { SqliteSessionStore } from './sqlite-session-store.js';
import { SqliteReplayGuard } from './sqlite-replay-guard.js';
import { closeInOrder } from '../../close-in-order.js';
import { SessionGate } from '../../identity/session-gate.js';

/** Tuning of the embedded backends; every field is optional. */
export interface EmbeddedBackendsOptions {
  /** The sink's batching (defaults on {@link BatchingOptions}); `onError` is always the logger's. */
  accessLog?: Omit<BatchingOptions, 'onError'>;
}

/**
 * Embedded {@link Backends} (design.md §2): sessions in `storage.db` (the gateway's SQLite file), an
 * in-process event bus, in-memory rate limits, and an access-log sink whose batches go straight to
 * `storage.storeAccessLogs` (the batch writer).
 */
export function openEmbeddedBackends(config: Config, storage: SqliteStorage, logger: Logger, options: EmbeddedBackendsOptions = {}): Backends {
  const sessions = new SqliteSessionStore(storage.db, { idleTimeoutMs: config.sessionChecks.idleTimeoutMs });
  const bus = new MemoryEventBus();
  let sink: BatchingAccessLogSink | undefined;
  return {
    sessions,
    sessionGate: new SessionGate(sessions, config.sessionChecks, logger.child({ component: 'sessions' })),
    bus,
    usedTokenIds: new SqliteReplayGuard(storage.db),
    generalLimiter: new MemoryRateLimiter(config.rateLimitGeneral),
    authLimiter: new MemoryRateLimiter(config.rateLimitAuth),
    tokenLimiter: new MemoryRateLimiter(config.rateLimitToken),
    accessLogSink: () =>
      (sink ??= new BatchingAccessLogSink((records) => storage.storeAccessLogs(batchOf(records)), {
        ...options.accessLog,
        onError: (err) => logger.error({ err }, 'storing access-log batch failed; will retry'),
      })),
    readiness: [],
    close: () => closeInOrder(sink, sessions, bus),
  };
}
