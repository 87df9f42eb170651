import type { Database } from 'better-sqlite3';
import type { AccessLogSink } from './access-log-sink.js';
import type { EventBus } from './event-bus.js';
import type { ReadinessCheck } from '../http/internal-endpoints.js';
import type { RateLimiter } from './rate-limiter.js';
import type { SessionStore } from './session-store.js';
import type { ReplayGuard } from './replay-guard.js';
import type { SessionGate } from '../identity/session-gate.js';
import type { StoreAccessLogs } from './access-log-batch.js';

/**
 * The admin plane's SQLite side, given to the backends of a process that has it (the embedded
 * gateway, the admin process; never a proxy process): `db` holds the embedded sessions, and
 * `storeAccessLogs` is where access-log records end up. The embedded sink hands its batches
 * straight to it; with Redis, a stream consumer started at open delivers them to it.
 */
export interface SqliteStorage {
  readonly db: Database;
  readonly storeAccessLogs: StoreAccessLogs;
}

/**
 * The four cross-plane dependencies of design.md §2, from one implementation: embedded (one process,
 * SQLite and memory) or Redis (split mode, or one process with REDIS_URL). Nothing in proxy/ or
 * admin/ knows which one it got.
 */
export interface Backends {
  readonly sessions: SessionStore;
  /** The process's one gate over {@link sessions}, which both planes admit sessions through. */
  readonly sessionGate: SessionGate;
  readonly bus: EventBus;
  /** Token ids used once (back-channel logout `jti`s), remembered across processes. */
  readonly usedTokenIds: ReplayGuard;
  readonly generalLimiter: RateLimiter;
  readonly authLimiter: RateLimiter;
  /** RATE_LIMIT_TOKEN, keyed by an admin API token's id (design.md §4.8); only the admin plane counts with it. */
  readonly tokenLimiter: RateLimiter;
  /**
   * The process's one access-log sink, for its data plane (made on the first call, the same one
   * after). Embedded: batches go to the {@link SqliteStorage} given at open; Redis: to the
   * access-log stream.
   */
  accessLogSink(): AccessLogSink;
  /** What `/readyz` checks for these backends (Redis reachable, registry and assertion keys loaded). */
  readonly readiness: readonly ReadinessCheck[];
  /**
   * Closes the sink when one was made (shipping what it holds, for at most 5 s), stops the stream
   * consumer (Redis with a {@link SqliteStorage}), then connections and timers. Call once the
   * planes take no more requests, and before closing the storage the records go to.
   */
  close(): Promise<void>;
}
