import type { Redis } from 'ioredis';
import type { Logger } from '../../logger.js';
import type { Service } from '../../types.js';
import { OutageLog } from './outage-log.js';
import { describeError } from './redis-errors.js';
import type { RedisConnections } from './redis-connections.js';
import { REGISTRY_CHANNEL, REGISTRY_EPOCH_KEY, REGISTRY_KEY, REGISTRY_VERSION_KEY } from './redis-keys.js';
import { parseSnapshot, supersedes, type RegistrySnapshot } from './registry-snapshot.js';

type Listener = (services: readonly Service[]) => void;

/**
 * The worker side of the registry: keeps the latest snapshot and tells listeners about each
 * newer one. It re-reads the snapshot (GET `gatehouse:registry`) on a change notice, whenever the
 * command or subscriber connection is ready again, and when the periodic version check (MGET of
 * version and epoch every `versionCheckMs`) finds it behind; pub/sub alone is not enough, as it
 * drops messages across reconnects. Reads run one at a time and only a newer snapshot (or one of
 * another epoch) replaces the current one. While Redis is away nothing changes: the last snapshot
 * stays in force.
 */
export class RegistryFollower {
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #listeners = new Set<Listener>();
  readonly #timer: NodeJS.Timeout;
  readonly #onReady = () => void this.refresh();
  readonly #detach: Array<() => void>;
  #current: RegistrySnapshot | undefined;
  #reading: Promise<void> | undefined;
  #readAgain = false;
  #checking = false;
  readonly #outage: OutageLog;

  constructor(connections: RedisConnections, versionCheckMs: number, logger: Logger) {
    this.#redis = connections.command;
    this.#logger = logger;
    this.#outage = new OutageLog(logger, 'cannot read the registry from Redis; keeping the last snapshot', 'registry readable from Redis again');
    this.#detach = [
      connections.subscriptions.subscribe(REGISTRY_CHANNEL, () => void this.refresh()),
      connections.subscriptions.onReconnect(() => void this.refresh()),
    ];
    this.#redis.on('ready', this.#onReady);
    this.#timer = setInterval(() => void this.#checkVersion(), versionCheckMs).unref();
    if (this.#redis.status === 'ready') void this.refresh();
  }

  get current(): RegistrySnapshot | undefined {
    return this.#current;
  }

  /** Calls `listener` now with the current snapshot (if any), then with every newer one. */
  onRegistry(listener: Listener): () => void {
    this.#listeners.add(listener);
    if (this.#current) this.#call(listener, this.#current.services);
    return () => this.#listeners.delete(listener);
  }

  /** Takes a snapshot this process has just published, when it is newer than the current one. */
  offer(snapshot: RegistrySnapshot): void {
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
      json = await this.#redis.get(REGISTRY_KEY);
    } catch (error) {
      this.#outage.failed(error);
      return;
    }
    this.#outage.succeeded();
    const snapshot = json === null ? undefined : parseSnapshot(json);
    if (json !== null && snapshot === undefined) this.#logger.error('unreadable registry snapshot in Redis; keeping the current one');
    if (snapshot && supersedes(snapshot, this.#current)) this.#apply(snapshot);
  }

  /** Reads the whole snapshot only when Redis' version or epoch differs from ours. */
  async #checkVersion(): Promise<void> {
    if (this.#checking || this.#reading) return;
    this.#checking = true;
    try {
      const [version, epoch] = await this.#redis.mget(REGISTRY_VERSION_KEY, REGISTRY_EPOCH_KEY);
      const current = this.#current;
      const behind = version !== null && (current === undefined || Number(version) !== current.version || epoch !== current.epoch);
      if (behind) await this.refresh();
    } catch (error) {
      this.#outage.failed(error);
    } finally {
      this.#checking = false;
    }
  }

  #apply(snapshot: RegistrySnapshot): void {
    const previous = this.#current;
    this.#current = snapshot;
    if (previous && previous.epoch !== snapshot.epoch) {
      this.#logger.warn({ version: snapshot.version }, 'registry counter restarted in Redis (data lost?); taking its snapshot');
    }
    for (const listener of this.#listeners) this.#call(listener, snapshot.services);
  }

  #call(listener: Listener, services: readonly Service[]): void {
    try {
      listener(services);
    } catch (error) {
      this.#logger.error({ err: describeError(error) }, 'registry listener failed');
    }
  }
}
