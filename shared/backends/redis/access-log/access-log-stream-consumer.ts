import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { Cluster } from 'ioredis';
import type { RedisClient } from '../connection/redis-client-options.js';
import { createLogger, type Logger } from '../../../logger.js';
import { checkRecords, type StoreAccessLogs } from '../../access-log-batch.js';
import { recordsField } from './access-log-stream-entry.js';
import { OutageLog } from '../../../outage-log.js';
import { nextEvent, type RedisConnections } from '../connection/redis-connections.js';
import { ACCESS_LOG_GROUP, ACCESS_LOG_STREAM } from '../redis-keys.js';
import { ensureGroup, forgetIdleConsumers, groupDrained, isNoGroup } from './stream-group.js';
import { claimReply, entriesOfRead, type StreamEntry } from './stream-replies.js';

/** How long {@link AccessLogStreamConsumer.stop} waits for the pass in progress, in ms. */
const STOP_GRACE_MS = 2_000;

export interface AccessLogStreamConsumerOptions {
  /** This consumer's name in the group; unique per process (default `<host>-<pid>-<random>`). */
  consumerName?: string;
  /** Stream entries (batches) read per XREADGROUP and stored in one call (default 20). */
  readCount?: number;
  /** How long one XREADGROUP waits for new entries, in ms (default 2,000). */
  blockMs?: number;
  /**
   * After a read that found fewer than `readCount` entries (no backlog), how long to let entries
   * gather before reading again, in ms (default 200; 0 reads again at once). Storing has a fixed
   * cost per call (the read, the hand-over to the writer thread and back, XACK + XDEL; hardly the
   * transaction: transactions of 500 within a call cost 0.2 µs per record more): 7.8 µs per record
   * in calls of 500 records against 5.8 in calls of 10,000 (bench/access-log/access-log-ingest.ts). Records
   * reach the console this much later, and on cores shared with proxies the larger calls add about
   * 1 ms to their p99 at half load (bench/README.md, "Experiments of 2026-11-25").
   */
  gatherMs?: number;
  /** Entries pending on any consumer for this long are claimed (XAUTOCLAIM), in ms (default 30,000). */
  claimMinIdleMs?: number;
  /** How often to look for such entries, in ms (default 10,000). */
  claimIntervalMs?: number;
  /** Pause after a failure with Redis reachable (e.g. the store threw), in ms (default 1,000). */
  retryDelayMs?: number;
  logger?: Logger;
}

/**
 * The admin side of the split-mode access-log pipeline: reads `gatehouse:access-log` in the
 * consumer group `gatehouse-admin` (created at id 0 with MKSTREAM when missing, and again if Redis
 * lost it), stores each read's records with one `store` call, and only then XACKs and XDELs the
 * entries (MULTI), so the stream holds just what is not stored yet; after a read that found no
 * backlog it lets entries gather for `gatherMs` before the next, so each store call takes several
 * proxies' batches at once. Entries a consumer left pending (it died, or its store threw) are
 * claimed by XAUTOCLAIM once idle `claimMinIdleMs`; the store's idempotence makes such
 * re-delivery harmless; its own pending entries (a read whose reply was lost in a reconnect) it
 * reads again first, at start and after every reconnect; consumers left with nothing pending and idle as long are then deleted from
 * the group, so stopped processes do not pile up in it. Malformed entries and records are logged
 * (counts only), acknowledged and skipped, never retried forever. Reads use a dedicated connection
 * (XREADGROUP BLOCK would hold up the shared one); when Redis is away the loop waits for it.
 */
export class AccessLogStreamConsumer {
  readonly consumerName: string;
  readonly #connections: RedisConnections;
  readonly #store: StoreAccessLogs;
  readonly #options: Required<Omit<AccessLogStreamConsumerOptions, 'consumerName' | 'logger'>>;
  readonly #logger: Logger;
  readonly #outage: OutageLog;
  readonly #drainWaiters = new Set<{ resolve: () => void; reject: (error: Error) => void }>();
  #redis: RedisClient | undefined;
  #running: Promise<void> | undefined;
  #stopping = new AbortController();
  #groupReady = false;
  /** Set at start and by every reconnect: this consumer's own pending entries are read first. */
  #ownPendingFirst = true;
  #clientId: number | undefined;
  #blocked = false;
  #nextClaimAt = 0;
  #drainCheck: Promise<void> | undefined;
  #checkAgain = false;
  #stored = 0;
  #skipped = 0;

  constructor(connections: RedisConnections, store: StoreAccessLogs, options: AccessLogStreamConsumerOptions = {}) {
    this.#connections = connections;
    this.#store = store;
    this.consumerName = options.consumerName ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
    this.#options = {
      readCount: options.readCount ?? 20,
      blockMs: options.blockMs ?? 2_000,
      gatherMs: options.gatherMs ?? 200,
      claimMinIdleMs: options.claimMinIdleMs ?? 30_000,
      claimIntervalMs: options.claimIntervalMs ?? 10_000,
      retryDelayMs: options.retryDelayMs ?? 1_000,
    };
    this.#logger = options.logger ?? createLogger('silent', 'access-log-consumer');
    this.#outage = new OutageLog(this.#logger, 'cannot consume the access-log stream; will retry', 'consuming the access-log stream again');
  }

  /** Records stored so far. */
  get stored(): number {
    return this.#stored;
  }

  /** Malformed records (or entries) skipped so far. */
  get skipped(): number {
    return this.#skipped;
  }

  /** Starts the read loop on a dedicated connection. Calling it while running does nothing. */
  start(): void {
    if (this.#running) return;
    this.#stopping = new AbortController();
    this.#redis = this.#connections.dedicated('access-log-consumer', this.#options.blockMs);
    this.#redis.on('close', () => {
      this.#clientId = undefined;
      this.#groupReady = false;
      this.#ownPendingFirst = true;
    });
    this.#running = this.#loop();
  }

  /**
   * Lets the batch being stored finish (and be acknowledged), stops reading, closes the dedicated
   * connection, and rejects pending {@link drained} calls. Entries read but not yet acknowledged
   * stay pending and are claimed by the next consumer. Bounded: a pass still running after
   * {@link STOP_GRACE_MS} (a Redis that stopped answering; this connection has no command timeout,
   * as its reads block) is cut by dropping the connection.
   */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#stopping.abort();
    if (this.#blocked) await this.#unblock();
    const cut = setTimeout(() => this.#redis?.disconnect(), STOP_GRACE_MS);
    await this.#running;
    clearTimeout(cut);
    this.#running = undefined;
    this.#redis?.disconnect();
    for (const waiter of this.#drainWaiters) waiter.reject(new Error('access-log consumer stopped'));
    this.#drainWaiters.clear();
  }

  /**
   * Resolves once the group has nothing left to do: no entry pending and nothing new in the
   * stream (see {@link groupDrained}). Checked now and after every pass of the read loop, so it
   * resolves soon after the last entry written before the call is stored. Waits while Redis is
   * away or the consumer is not started; rejects when it is stopped.
   */
  drained(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#drainWaiters.add({ resolve, reject });
      this.#checkDrained();
    });
  }

  async #loop(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      if (this.#redis!.status !== 'ready') await this.#connected();
      if (this.#stopping.signal.aborted) break;
      let read = 0;
      try {
        read = await this.#pass();
        this.#outage.succeeded();
      } catch (error) {
        await this.#recover(error);
      }
      this.#checkDrained();
      if (read > 0 && read < this.#options.readCount) await this.#pause(this.#options.gatherMs);
    }
  }

  /**
   * One pass: make sure the group exists, claim stale entries when due, read and store new ones.
   * Resolves with how many new entries it read.
   */
  async #pass(): Promise<number> {
    const redis = this.#redis!;
    if (!this.#groupReady) {
      await ensureGroup(redis, ACCESS_LOG_STREAM, ACCESS_LOG_GROUP);
      this.#groupReady = true;
    }
    if (!(redis instanceof Cluster)) this.#clientId ??= (await redis.client('ID')) as number;
    if (this.#ownPendingFirst) await this.#readOwnPending(redis);
    if (Date.now() >= this.#nextClaimAt) await this.#claimStale(redis);
    if (this.#stopping.signal.aborted) return 0;
    const entries = await this.#readNew(redis);
    if (entries.length > 0) await this.#process(redis, entries);
    return entries.length;
  }

  /**
   * Stores the entries delivered to this consumer and not acknowledged (XREADGROUP from id 0), page
   * by page: a read whose reply was lost when the connection dropped (a failover, after Redis
   * delivered) left them pending here, where XAUTOCLAIM would see them only after
   * `claimMinIdleMs`. Entries deleted meanwhile come back without fields and are acknowledged.
   */
  async #readOwnPending(redis: RedisClient): Promise<void> {
    for (;;) {
      const reply = await redis.xreadgroup('GROUP', ACCESS_LOG_GROUP, this.consumerName, 'COUNT', this.#options.readCount, 'STREAMS', ACCESS_LOG_STREAM, '0');
      const entries = entriesOfRead(reply);
      if (entries.length === 0 || this.#stopping.signal.aborted) break;
      await this.#process(redis, entries);
    }
    this.#ownPendingFirst = false;
  }

  /**
   * XREADGROUP … BLOCK, waking in time for the next claim check. An empty answer may be the
   * client's own timeout with Redis' reply still on its way (a busy event loop runs the timer
   * first; ioredis then drops the late reply), which would leave what Redis delivered pending
   * here until the idle reclaim, 30 s later: so after one, the next pass reads this consumer's own
   * pending entries first (one cheap, non-blocking read per idle wait).
   */
  async #readNew(redis: RedisClient): Promise<StreamEntry[]> {
    const blockMs = Math.max(1, Math.min(this.#options.blockMs, this.#nextClaimAt - Date.now()));
    this.#blocked = true;
    try {
      const reply = await redis.xreadgroup(
        'GROUP', ACCESS_LOG_GROUP, this.consumerName,
        'COUNT', this.#options.readCount,
        'BLOCK', blockMs,
        'STREAMS', ACCESS_LOG_STREAM, '>',
      );
      const entries = entriesOfRead(reply);
      if (entries.length === 0) this.#ownPendingFirst = true;
      return entries;
    } finally {
      this.#blocked = false;
    }
  }

  /**
   * XAUTOCLAIM every entry idle for claimMinIdleMs, page by page, storing each page; then delete
   * the consumers that were left with nothing (stopped admin processes).
   */
  async #claimStale(redis: RedisClient): Promise<void> {
    this.#nextClaimAt = Date.now() + this.#options.claimIntervalMs;
    let cursor = '0-0';
    do {
      const reply = await redis.xautoclaim(
        ACCESS_LOG_STREAM, ACCESS_LOG_GROUP, this.consumerName, this.#options.claimMinIdleMs, cursor,
        'COUNT', this.#options.readCount,
      );
      const page = claimReply(reply);
      if (page.entries.length > 0) await this.#process(redis, page.entries);
      cursor = page.cursor;
    } while (cursor !== '0-0' && !this.#stopping.signal.aborted);
    const forgotten = await forgetIdleConsumers(redis, ACCESS_LOG_STREAM, ACCESS_LOG_GROUP, this.consumerName, this.#options.claimMinIdleMs);
    if (forgotten.length > 0) this.#logger.info({ consumers: forgotten }, 'removed stopped consumers from the access-log group');
  }

  /**
   * Stores the entries' valid records in one call (the admin passes `AccessLogWriter.store`: one
   * SQLite transaction, idempotent by `eventId`), then acknowledges and deletes all the entries.
   * A store that throws leaves them to be delivered again.
   */
  async #process(redis: RedisClient, entries: StreamEntry[]): Promise<void> {
    const json: string[] = [];
    let count = 0;
    let invalid = 0;
    for (const entry of entries) {
      if (entry.fields === null) continue;
      const checked = checkRecords(recordsField(entry.fields));
      if (checked.json !== undefined) json.push(checked.json);
      count += checked.count;
      invalid += checked.invalid;
    }
    if (invalid > 0) this.#logger.error({ invalid, entries: entries.length }, 'skipping malformed access-log records');
    if (count > 0) await this.#store({ json, count });
    const ids = entries.map((entry) => entry.id);
    const results = await redis.multi().xack(ACCESS_LOG_STREAM, ACCESS_LOG_GROUP, ...ids).xdel(ACCESS_LOG_STREAM, ...ids).exec();
    const failed = results?.find(([error]) => error !== null)?.[0];
    if (failed) throw failed;
    this.#stored += count;
    this.#skipped += invalid;
  }

  /**
   * After a failed pass: recreate a lost group at once; else log it, and pause unless Redis is
   * away. Either way the next pass reads this consumer's own pending entries first: the failed
   * read may have been delivered with its reply lost (a Cluster client reports a node's failure
   * this way, without closing).
   */
  async #recover(error: unknown): Promise<void> {
    this.#ownPendingFirst = true;
    if (isNoGroup(error)) {
      this.#groupReady = false;
      return;
    }
    this.#outage.failed(error);
    if (this.#redis!.status !== 'ready') return; // the loop waits for the reconnect
    await this.#pause(this.#options.retryDelayMs);
  }

  /** Waits `ms`, or until stop. */
  async #pause(ms: number): Promise<void> {
    if (ms > 0) await delay(ms, undefined, { signal: this.#stopping.signal }).catch(() => undefined);
  }

  /** Waits for the dedicated connection's next 'ready' (or for stop). */
  async #connected(): Promise<void> {
    const ready = nextEvent(this.#redis!, 'ready');
    const onAbort = () => ready.cancel(new Error('stopped'));
    this.#stopping.signal.addEventListener('abort', onAbort, { once: true });
    await ready.promise.catch(() => undefined);
    this.#stopping.signal.removeEventListener('abort', onAbort);
  }

  /**
   * CLIENT UNBLOCK on the command connection ends a waiting XREADGROUP as if it timed out. A
   * Cluster client's commands may go to another node than the read's, so there the read's
   * connection is dropped instead (entries it was delivered stay pending for the next start).
   */
  async #unblock(): Promise<void> {
    if (this.#redis instanceof Cluster) return this.#redis.disconnect();
    if (this.#clientId === undefined) return;
    await this.#connections.command.client('UNBLOCK', this.#clientId).catch(() => this.#redis?.disconnect());
  }

  /** Runs {@link groupDrained} for waiting callers; a request during a check runs one more. */
  #checkDrained(): void {
    if (this.#drainWaiters.size === 0) return;
    if (this.#drainCheck) {
      this.#checkAgain = true;
      return;
    }
    this.#drainCheck = this.#drainLoop().finally(() => (this.#drainCheck = undefined));
  }

  async #drainLoop(): Promise<void> {
    do {
      this.#checkAgain = false;
      const drained = await groupDrained(this.#connections.command, ACCESS_LOG_STREAM, ACCESS_LOG_GROUP).catch(() => false);
      if (drained) {
        for (const waiter of this.#drainWaiters) waiter.resolve();
        this.#drainWaiters.clear();
      }
    } while (this.#checkAgain && this.#drainWaiters.size > 0);
  }
}
