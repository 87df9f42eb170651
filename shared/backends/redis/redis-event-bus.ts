import type { EventBus } from '../event-bus.js';
import { createLogger, type Logger } from '../../logger.js';
import type { Service } from '../../types.js';
import type { RedisConnections } from './redis-connections.js';
import { RegistryFollower } from './registry-follower.js';
import { RegistryPublisher } from './registry-publisher.js';

export interface RedisEventBusOptions {
  /** How often a subscriber compares its snapshot's version with Redis' (one MGET), in ms (default 500). */
  versionCheckMs?: number;
  logger?: Logger;
}

/**
 * Split-mode {@link EventBus} (design.md §2.1): a versioned registry snapshot in Redis plus a pub/sub
 * notice per change.
 * - Publishing ({@link RegistryPublisher}): one Lua script INCRs `gatehouse:registry:version`,
 *   SETs `gatehouse:registry` = `{version, epoch, services}` and PUBLISHes the version on
 *   `gatehouse:registry-changed`. The snapshot is re-published on reconnect if the last attempt
 *   failed or Redis lost it.
 * - Subscribing ({@link RegistryFollower}): re-reads the snapshot on a notice, on every
 *   (re)connect, and when the version check every `versionCheckMs` finds it behind. Listeners get
 *   the current snapshot at once when one is loaded, then every newer one, never an older one.
 *   While Redis is away the last snapshot stays in force.
 * An instance does both; a snapshot it publishes reaches its own listeners before
 * `publishRegistry` resolves.
 */
export class RedisEventBus implements EventBus {
  readonly #publisher: RegistryPublisher;
  readonly #follower: RegistryFollower;

  constructor(connections: RedisConnections, options: RedisEventBusOptions = {}) {
    const logger = options.logger ?? createLogger('silent', 'event-bus');
    this.#publisher = new RegistryPublisher(connections, logger);
    this.#follower = new RegistryFollower(connections, options.versionCheckMs ?? 500, logger);
  }

  /** Whether a snapshot has been read (or published) at least once: the registry half of /readyz. */
  get loaded(): boolean {
    return this.#follower.current !== undefined;
  }

  /** The loaded snapshot's version (undefined before the first). */
  get version(): number | undefined {
    return this.#follower.current?.version;
  }

  /**
   * Stores `services` as the next snapshot and notifies every subscriber.
   * @throws {RedisUnavailableError} when Redis is unreachable (retried by itself on reconnect).
   */
  async publishRegistry(services: readonly Service[]): Promise<void> {
    this.#follower.offer(await this.#publisher.publish(services));
  }

  onRegistry(listener: (services: readonly Service[]) => void): () => void {
    return this.#follower.onRegistry(listener);
  }

  /** Re-reads the snapshot now (a test hook and a readiness nudge); never rejects. */
  refresh(): Promise<void> {
    return this.#follower.refresh();
  }

  /** Stops publishing and following. The connections belong to the caller. */
  async close(): Promise<void> {
    await this.#publisher.close();
    await this.#follower.close();
  }
}
