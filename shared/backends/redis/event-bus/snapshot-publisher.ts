import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../connection/redis-client-options.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import type { Logger } from '../../../logger.js';
import { describeError } from '../../../error-code.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import { PUBLISH_SNAPSHOT_LUA, type Snapshot, type SnapshotTopic } from './snapshot.js';

/**
 * The admin side of a {@link SnapshotTopic}: writes snapshots with {@link PUBLISH_SNAPSHOT_LUA}
 * (EVAL; a publication is rare, so the script is simply sent each time), one at a time, in call
 * order. It remembers the latest payload it was asked for, and whenever the command connection is
 * ready again it publishes that one if the last attempt failed, or re-creates it if Redis lost it
 * (restart without persistence), so workers and new processes always find the current state.
 */
export class SnapshotPublisher<T> {
  readonly #connections: RedisConnections;
  readonly #topic: SnapshotTopic<T>;
  readonly #redis: RedisClient;
  readonly #logger: Logger;
  readonly #onReady = () => this.#republish();
  #latest: T | undefined;
  #latestFailed = false;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(connections: RedisConnections, topic: SnapshotTopic<T>, logger: Logger) {
    this.#connections = connections;
    this.#topic = topic;
    this.#redis = connections.command;
    this.#logger = logger;
    this.#redis.on('ready', this.#onReady);
  }

  /**
   * Publishes `payload` as the next version; resolves with the stored snapshot. Waits up to
   * `writeWaitMs` for a reconnecting Redis (see {@link RedisConnections.writable}).
   * @throws {RedisUnavailableError} when Redis cannot take it (it is retried on reconnect).
   */
  publish(payload: T): Promise<Snapshot<T>> {
    this.#latest = payload;
    return this.#enqueue(async () => {
      await this.#connections.writable();
      const snapshot = await this.#write(payload, false);
      return snapshot!;
    });
  }

  /** Stops republishing on reconnect and waits for publications under way. */
  async close(): Promise<void> {
    this.#redis.off('ready', this.#onReady);
    await this.#queue;
  }

  #republish(): void {
    const payload = this.#latest;
    if (payload === undefined) return;
    const onlyIfMissing = !this.#latestFailed;
    this.#enqueue(() => this.#write(payload, onlyIfMissing)).catch((error: unknown) =>
      this.#logger.warn({ err: describeError(error) }, `republishing the ${this.#topic.name} failed; will retry on reconnect`),
    );
  }

  /** Runs the script; undefined when skipped because a snapshot exists. */
  async #write(payload: T, onlyIfMissing: boolean): Promise<Snapshot<T> | undefined> {
    const topic = this.#topic;
    let result: [number, string];
    try {
      result = (await this.#redis.eval(
        PUBLISH_SNAPSHOT_LUA,
        3,
        topic.key,
        topic.versionKey,
        topic.epochKey,
        JSON.stringify(payload),
        randomUUID(),
        onlyIfMissing ? '1' : '0',
        topic.channel,
        topic.field,
      )) as [number, string];
    } catch (error) {
      if (payload === this.#latest) this.#latestFailed = true;
      throw new RedisUnavailableError(`publishing the ${topic.name}`, error);
    }
    if (payload === this.#latest) this.#latestFailed = false;
    const [version, epoch] = result;
    return version === 0 ? undefined : { version, epoch, payload };
  }

  #enqueue<R>(task: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(task);
    this.#queue = run.catch(() => undefined);
    return run;
  }
}
