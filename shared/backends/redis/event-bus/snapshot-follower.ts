import type { RedisClient } from '../connection/redis-client-options.js';
import type { Logger } from '../../../logger.js';
import { OutageLog } from '../../../outage-log.js';
import { describeError } from '../../../error-code.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import { parseSnapshot, supersedes, type Snapshot, type SnapshotTopic } from './snapshot.js';

/**
 * The worker side of a {@link SnapshotTopic}: keeps the latest snapshot and tells listeners about
 * each newer one. It re-reads the snapshot (GET of the topic's key) on a change notice, whenever
 * the command or subscriber connection is ready again, and when the periodic version check (MGET
 * of version and epoch every `versionCheckMs`) finds it behind; pub/sub alone is not enough, as it
 * drops messages across reconnects. Reads run one at a time and only a newer snapshot (or one of
 * another epoch) replaces the current one. While Redis is away nothing changes: the last snapshot
 * stays in force.
 */
export class SnapshotFollower<T> {
  readonly #topic: SnapshotTopic<T>;
  readonly #redis: RedisClient;
  readonly #logger: Logger;
  readonly #listeners = new Set<(payload: T) => void>();
  readonly #timer: NodeJS.Timeout;
  readonly #onReady = () => void this.refresh();
  readonly #detach: Array<() => void>;
  #current: Snapshot<T> | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #checking = false;
  readonly #outage: OutageLog;

  constructor(connections: RedisConnections, topic: SnapshotTopic<T>, versionCheckMs: number, logger: Logger) {
    this.#topic = topic;
    this.#redis = connections.command;
    this.#logger = logger;
    this.#outage = new OutageLog(logger, `cannot read the ${topic.name} from Redis; keeping the last snapshot`, `${topic.name} readable from Redis again`);
    this.#detach = [
      connections.subscriptions.subscribe(topic.channel, () => void this.refresh()),
      connections.subscriptions.onReconnect(() => void this.refresh()),
    ];
    this.#redis.on('ready', this.#onReady);
    this.#timer = setInterval(() => void this.#checkVersion(), versionCheckMs).unref();
    if (this.#redis.status === 'ready') void this.refresh();
  }

  get current(): Snapshot<T> | undefined {
    return this.#current;
  }

  /** Calls `listener` now with the current payload (if any), then with every newer one. */
  listen(listener: (payload: T) => void): () => void {
    this.#listeners.add(listener);
    if (this.#current) this.#call(listener, this.#current.payload);
    return () => this.#listeners.delete(listener);
  }

  /** Takes a snapshot this process has just published, when it is newer than the current one. */
  offer(snapshot: Snapshot<T>): void {
    if (supersedes(snapshot, this.#current)) this.#apply(snapshot);
  }

  /**
   * Re-reads the snapshot from Redis; resolves when done (never rejects: a failed read leaves the
   * current snapshot). Calls during a read are folded into one more read after it.
   */
  refresh(): Promise<void> {
    if (this.#reading) {
      this.#readAgain = true;
      return this.#reading;
    }
    this.#reading = this.#readLoop().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  /** Stops the version check and listening; the current snapshot stays readable. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#redis.off('ready', this.#onReady);
    for (const detach of this.#detach) detach();
    this.#listeners.clear();
    await this.#reading;
  }

  async #readLoop(): Promise<void> {
    do {
      this.#readAgain = false;
      await this.#readOnce();
    } while (this.#readAgain);
  }

  async #readOnce(): Promise<void> {
    let json: string | null;
    try {
      json = await this.#redis.get(this.#topic.key);
    } catch (error) {
      this.#outage.failed(error);
      return;
    }
    this.#outage.succeeded();
    const snapshot = json === null ? undefined : parseSnapshot(json, this.#topic);
    // Never the value itself in the log: the assertion keys' snapshot holds a private key.
    if (json !== null && snapshot === undefined) this.#logger.error(`unreadable ${this.#topic.name} snapshot in Redis; keeping the current one`);
    if (snapshot && supersedes(snapshot, this.#current)) this.#apply(snapshot);
  }

  /** Reads the whole snapshot only when Redis' version or epoch differs from ours. */
  async #checkVersion(): Promise<void> {
    if (this.#checking || this.#reading) return;
    this.#checking = true;
    try {
      const [version, epoch] = await this.#redis.mget(this.#topic.versionKey, this.#topic.epochKey);
      const current = this.#current;
      const behind = version !== null && (current === undefined || Number(version) !== current.version || epoch !== current.epoch);
      if (behind) await this.refresh();
    } catch (error) {
      this.#outage.failed(error);
    } finally {
      this.#checking = false;
    }
  }

  #apply(snapshot: Snapshot<T>): void {
    const previous = this.#current;
    this.#current = snapshot;
    if (previous && previous.epoch !== snapshot.epoch) {
      this.#logger.warn({ version: snapshot.version }, `${this.#topic.name} counter restarted in Redis (data lost?); taking its snapshot`);
    }
    for (const listener of this.#listeners) this.#call(listener, snapshot.payload);
  }

  #call(listener: (payload: T) => void, payload: T): void {
    try {
      listener(payload);
    } catch (error) {
      this.#logger.error({ err: describeError(error) }, `${this.#topic.name} listener failed`);
    }
  }
}
