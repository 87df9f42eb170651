import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RedisConnections } from './redis-connections.js';
import type { Logger } from '../../logger.js';
import type { Service } from '../../types.js';
import { RedisUnavailableError, describeError } from './redis-errors.js';
import { REGISTRY_CHANNEL, REGISTRY_EPOCH_KEY, REGISTRY_KEY, REGISTRY_VERSION_KEY } from './redis-keys.js';
import { PUBLISH_SNAPSHOT_LUA, type RegistrySnapshot } from './registry-snapshot.js';

/**
 * The admin side of the registry: writes snapshots with {@link PUBLISH_SNAPSHOT_LUA} (EVAL; a
 * publication is rare, so the script is simply sent each time), one at a time, in call order.
 * It remembers the latest snapshot it was asked for, and whenever the command connection is ready
 * again it publishes that one if the last attempt failed, or re-creates it if Redis lost it
 * (restart without persistence), so workers and new processes always find the current registry.
 */
export class RegistryPublisher {
  readonly #connections: RedisConnections;
  readonly #redis: Redis;
  readonly #logger: Logger;
  readonly #onReady = () => this.#republish();
  #latest: readonly Service[] | undefined;
  #latestFailed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(connections: RedisConnections, logger: Logger) {
    this.#connections = connections;
    this.#redis = connections.command;
    this.#logger = logger;
    this.#redis.on('ready', this.#onReady);
  }

  /**
   * Publishes `services` as the next version; resolves with the stored snapshot. Waits up to
   * `writeWaitMs` for a reconnecting Redis (see {@link RedisConnections.writable}).
   * @throws {RedisUnavailableError} when Redis cannot take it (it is retried on reconnect).
   */
  publish(services: readonly Service[]): Promise<RegistrySnapshot> {
    this.#latest = services;
    return this.#enqueue(async () => {
      await this.#connections.writable();
      const snapshot = await this.#write(services, false);
      return snapshot!;
    });
  }

  /** Stops republishing on reconnect and waits for publications under way. */
  async close(): Promise<void> {
    this.#redis.off('ready', this.#onReady);
    await this.#queue;
  }

  #republish(): void {
    const services = this.#latest;
    if (services === undefined) return;
    const onlyIfMissing = !this.#latestFailed;
    this.#enqueue(() => this.#write(services, onlyIfMissing)).catch((error: unknown) =>
      this.#logger.warn({ err: describeError(error) }, 'republishing the registry failed; will retry on reconnect'),
    );
  }

  /** Runs the script; undefined when skipped because a snapshot exists. */
  async #write(services: readonly Service[], onlyIfMissing: boolean): Promise<RegistrySnapshot | undefined> {
    let result: [number, string];
    try {
      result = (await this.#redis.eval(
        PUBLISH_SNAPSHOT_LUA,
        3,
        REGISTRY_KEY,
        REGISTRY_VERSION_KEY,
        REGISTRY_EPOCH_KEY,
        JSON.stringify(services),
        randomUUID(),
        onlyIfMissing ? '1' : '0',
        REGISTRY_CHANNEL,
      )) as [number, string];
    } catch (error) {
      if (services === this.#latest) this.#latestFailed = true;
      throw new RedisUnavailableError('publishing the registry', error);
    }
    if (services === this.#latest) this.#latestFailed = false;
    const [version, epoch] = result;
    return version === 0 ? undefined : { version, epoch, services };
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
