import type { AccessLogSink } from './access-log-sink.js';
import type { EventBus } from './event-bus.js';
import type { ReadinessCheck } from '../internal-endpoints.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SessionStore } from './session-store.js';
import type { AccessLogEntry } from '../types.js';

/** Stores one batch of access-log records durably (the admin plane's SQLite writer). */
export type StoreAccessLogs = (batch: AccessLogEntry[]) => void | Promise<void>;

/**
 * The four cross-plane dependencies of DESIGN §2, from one implementation: embedded (one process,
 * SQLite and memory) or Redis (split mode, or one process with REDIS_URL). Nothing in proxy/ or
 * admin/ knows which one it got.
 */
export interface Backends {
  readonly sessions: SessionStore;
  readonly bus: EventBus;
  readonly generalLimiter: RateLimiter;
  readonly authLimiter: RateLimiter;
  /**
   * The data plane's access-log sink. Embedded: batches go straight to `store`; Redis: to the
   * access-log stream (`store` unused: the admin process consumes the stream).
   */
  accessLogSink(store?: StoreAccessLogs): AccessLogSink;
  /**
   * The admin side of the pipeline: delivers shipped records to `store`. Embedded: nothing to do
   * (the sink calls `store` itself). Redis: a consumer-group reader of the stream.
   */
  consumeAccessLogs(store: StoreAccessLogs): { stop(): Promise<void> };
  /** What `/readyz` checks for these backends (Redis reachable, registry loaded). */
  readonly readiness: readonly ReadinessCheck[];
  /** Closes connections and timers; call after the planes are closed. */
  close(): Promise<void>;
}
