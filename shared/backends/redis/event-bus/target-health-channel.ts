import type { Logger } from '../../../logger.js';
import { parseTargetHealthReport } from '../../../services/target-health-report.js';
import type { TargetHealthReport } from '../../../types.js';
import type { ChannelSubscriptions } from '../connection/channel-subscriptions.js';
import type { RedisClient } from '../connection/redis-client-options.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import { describeError } from '../../../error-code.js';
import { RedisUnavailableError } from '../connection/redis-errors.js';
import { TARGET_HEALTH_CHANNEL } from '../redis-keys.js';

/**
 * Target health reports over Redis pub/sub (`gatehouse:target-health`, redis-keys.ts): proxy
 * processes PUBLISH theirs as JSON, the admin plane subscribes. Nothing is stored, nothing is
 * replayed: a report lost (Redis away, a subscriber reconnecting) is replaced by the next one a few
 * seconds later. A PUBLISH reaches every subscriber on a single node, through the Sentinels'
 * primary, and on every node of a Cluster (channels are cluster-wide).
 *
 * The channel is subscribed only while this instance has a listener, so proxy processes, which
 * only publish, never receive the fleet's reports. Each message is parsed and checked once
 * (shared/services/target-health-report.ts); one that is no report is dropped (the first with a warning,
 * later ones at debug level: an old proxy beside a new admin would publish one every few seconds).
 */
export class TargetHealthChannel {
  readonly #redis: RedisClient;
  readonly #subscriptions: ChannelSubscriptions;
  readonly #logger: Logger;
  readonly #listeners = new Set<(report: TargetHealthReport) => void>();
  #unsubscribe: (() => void) | undefined;
  #warned = false;

  constructor(connections: RedisConnections, logger: Logger) {
    this.#redis = connections.command;
    this.#subscriptions = connections.subscriptions;
    this.#logger = logger;
  }

  /**
   * PUBLISHes `report` on the command connection, at once (no wait for a reconnecting Redis).
   * Resolves once Redis took it, however many subscribers heard it.
   * @throws {RedisUnavailableError} when Redis is unreachable or does not answer in time.
   */
  async publish(report: TargetHealthReport): Promise<void> {
    try {
      await this.#redis.publish(TARGET_HEALTH_CHANNEL, JSON.stringify(report));
    } catch (error) {
      throw new RedisUnavailableError('publishing a target health report', error);
    }
  }

  /** Calls `listener` with every well-formed report published from now on; returns the function that stops it. */
  listen(listener: (report: TargetHealthReport) => void): () => void {
    this.#listeners.add(listener);
    this.#unsubscribe ??= this.#subscriptions.subscribe(TARGET_HEALTH_CHANNEL, (message) => this.#deliver(message));
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#stop();
    };
  }

  /** Stops listening (every listener dropped). */
  close(): void {
    this.#listeners.clear();
    this.#stop();
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  #deliver(message: string): void {
    const report = parseTargetHealthReport(parseJson(message));
    if (report === undefined) {
      const level = this.#warned ? 'debug' : 'warn';
      this.#warned = true;
      this.#logger[level]({ channel: TARGET_HEALTH_CHANNEL, bytes: message.length }, 'a message that is no target health report; ignored');
      return;
    }
    for (const listener of this.#listeners) {
      try {
        listener(report);
      } catch (error) {
        this.#logger.error({ err: describeError(error) }, 'target health listener failed');
      }
    }
  }
}

/** `text` parsed as JSON, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
