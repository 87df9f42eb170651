import type { AccessLogSink } from '../../access-log-sink.js';
import { BatchingAccessLogSink, type BatchingOptions } from '../../batching-access-log-sink.js';
import { createLogger, type Logger } from '../../../logger.js';
import type { AccessLogEntry } from '../../../types.js';
import { encodeBatch } from './access-log-stream-entry.js';
import { OutageLog } from '../../../outage-log.js';
import type { RedisClient } from '../connection/redis-client-options.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import { ReplicaConfirmation } from '../connection/replica-confirmation.js';
import { ACCESS_LOG_STREAM } from '../redis-keys.js';

export interface RedisAccessLogSinkOptions extends BatchingOptions {
  /**
   * About how many entries (batches) the stream keeps, oldest trimmed first: XADD `MAXLEN ~`
   * (default 100,000). The consumer deletes what it has stored, so this only bites while the admin
   * process is away for long; it caps Redis memory then.
   */
  maxStreamLength?: number;
  /** How long a batch waits for a replica to confirm it before it counts as not shipped, in ms (default 1,000). */
  replicaWaitMs?: number;
  logger?: Logger;
}

/**
 * The data plane's access-log sink in split mode: a {@link BatchingAccessLogSink} whose shipment is
 * one XADD per batch to `gatehouse:access-log` (`MAXLEN ~ <maxStreamLength>`, field `records` =
 * JSON array), confirmed by a replica when the primary has any ({@link ReplicaConfirmation}: a
 * batch a failover could lose is not counted as shipped). It ships on a connection of its own
 * with no offline queue: while Redis is away XADD rejects at once, so the batch stays in the
 * sink's own bounded buffer (drops counted) and is retried every `intervalMs`, and
 * `flush()`/`close()` never hang on a queue inside ioredis. (With ioredis' offline queue, batches
 * would pile up there unbounded and uncounted, and a shipment would wait for the reconnect,
 * stalling every later one.) A batch whose XADD timed out, or that no replica confirmed, may have
 * been stored and is then sent again; the consumer's idempotent insert absorbs that.
 */
export class RedisAccessLogSink implements AccessLogSink {
  readonly #writes: ReplicaConfirmation;
  readonly #batching: BatchingAccessLogSink;
  readonly #maxStreamLength: number;
  readonly #outage: OutageLog;
  readonly #onError: (error: unknown) => void;

  constructor(connections: RedisConnections, options: RedisAccessLogSinkOptions = {}) {
    this.#writes = new ReplicaConfirmation(connections, 'access-log-sink', options.replicaWaitMs);
    this.#maxStreamLength = options.maxStreamLength ?? 100_000;
    const logger = options.logger ?? createLogger('silent', 'access-log');
    this.#outage = new OutageLog(logger, 'cannot ship access-log records; buffering them', 'shipping access-log records again');
    this.#onError = options.onError ?? (() => {});
    this.#batching = new BatchingAccessLogSink((batch) => this.#ship(batch), { ...options, onError: (e) => this.#failed(e) });
  }

  /** Records dropped because the buffer was full (Redis away too long) or the sink was closed. */
  get dropped(): number {
    return this.#batching.dropped;
  }

  /** Records added to the stream so far. */
  get shipped(): number {
    return this.#batching.shipped;
  }

  write(record: AccessLogEntry): void {
    this.#batching.write(record);
  }

  /** Ships everything buffered; resolves when Redis took it, or (Redis away) when the attempt failed. */
  flush(): Promise<void> {
    return this.#batching.flush();
  }

  /** Ships what is buffered for at most `closeTimeoutMs` (5 s) while Redis is away, then drops and counts the rest. */
  close(): Promise<void> {
    return this.#batching.close();
  }

  async #ship(batch: AccessLogEntry[]): Promise<void> {
    const add = (client: RedisClient) => client.pipeline().xadd(ACCESS_LOG_STREAM, 'MAXLEN', '~', this.#maxStreamLength, '*', ...encodeBatch(batch));
    await this.#writes.write(add, ACCESS_LOG_STREAM, 'shipping access-log records');
    this.#outage.succeeded();
  }

  #failed(error: unknown): void {
    this.#onError(error);
    this.#outage.failed(error);
  }
}
