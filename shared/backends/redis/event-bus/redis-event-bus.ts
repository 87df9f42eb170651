import type { AssertionKeySet } from '../../../identity/assertion-key-set.js';
import type { EventBus } from '../../event-bus.js';
import { createLogger, type Logger } from '../../../logger.js';
import type { Service, TargetHealthReport } from '../../../types.js';
import type { RedisConnections } from '../connection/redis-connections.js';
import { SnapshotFollower } from './snapshot-follower.js';
import { SnapshotPublisher } from './snapshot-publisher.js';
import { TargetHealthChannel } from './target-health-channel.js';
import { ACME_CHALLENGES_TOPIC, ASSERTION_KEYS_TOPIC, CERTIFICATES_TOPIC, REGISTRY_TOPIC } from './snapshot-topics.js';
import type { AcmeChallengeSet, CertificateNotice } from '../../../tls/acme-messages.js';
import type { SnapshotTopic } from './snapshot.js';

export interface RedisEventBusOptions {
  /** How often a subscriber compares each snapshot's version with Redis' (one MGET), in ms (default 500). */
  versionCheckMs?: number;
  logger?: Logger;
}

/**
 * Split-mode {@link EventBus} (design.md §2.1): per topic (the registry, the assertion keys, the
 * ACME challenges and certificate notice: see snapshot-topics.ts and redis-keys.ts), a versioned
 * snapshot in Redis plus a pub/sub notice per change. A topic is followed from its first use (the
 * ACME ones cost nothing while ACME is off).
 * - Publishing ({@link SnapshotPublisher}): one Lua script INCRs the topic's version key (such as
 *   `gatehouse:{registry}:version`), SETs its snapshot (`gatehouse:{registry}` =
 *   `{version, epoch, services}`) and PUBLISHes the version on its channel
 *   (`gatehouse:registry-changed`). The snapshot is re-published on reconnect if the last attempt
 *   failed or Redis lost it.
 * - Subscribing ({@link SnapshotFollower}): re-reads the snapshot on a notice, on every
 *   (re)connect, and when the version check every `versionCheckMs` finds it behind. Listeners get
 *   the current snapshot at once when one is loaded, then every newer one, never an older one.
 *   While Redis is away the last snapshot stays in force.
 * An instance does both; a snapshot it publishes reaches its own listeners before the publication
 * resolves.
 *
 * Target health reports go the other way (proxy processes to the admin plane) and are no snapshot:
 * a plain PUBLISH of the JSON report on `gatehouse:target-health`, nothing stored
 * ({@link TargetHealthChannel}).
 */
export class RedisEventBus implements EventBus {
  readonly #registry: Topic<readonly Service[]>;
  readonly #assertionKeys: Topic<AssertionKeySet>;
  readonly #challenges: Topic<AcmeChallengeSet>;
  readonly #certificates: Topic<CertificateNotice>;
  readonly #targetHealth: TargetHealthChannel;

  constructor(connections: RedisConnections, options: RedisEventBusOptions = {}) {
    const logger = options.logger ?? createLogger('silent', 'event-bus');
    const versionCheckMs = options.versionCheckMs ?? 500;
    this.#registry = new Topic(connections, REGISTRY_TOPIC, versionCheckMs, logger);
    this.#assertionKeys = new Topic(connections, ASSERTION_KEYS_TOPIC, versionCheckMs, logger);
    this.#challenges = new Topic(connections, ACME_CHALLENGES_TOPIC, versionCheckMs, logger);
    this.#certificates = new Topic(connections, CERTIFICATES_TOPIC, versionCheckMs, logger);
    this.#targetHealth = new TargetHealthChannel(connections, logger);
  }

  /** Whether a registry snapshot has been read (or published) at least once: the registry half of /readyz. */
  get loaded(): boolean {
    return this.#registry.follower.current !== undefined;
  }

  /** The loaded registry snapshot's version (undefined before the first). */
  get version(): number | undefined {
    return this.#registry.follower.current?.version;
  }

  /** Whether an assertion key set has been read (or published): the data plane can sign (/readyz). */
  get assertionKeysLoaded(): boolean {
    return this.#assertionKeys.follower.current !== undefined;
  }

  /**
   * Stores `services` as the next snapshot and notifies every subscriber.
   * @throws {RedisUnavailableError} when Redis is unreachable (retried by itself on reconnect).
   */
  publishRegistry(services: readonly Service[]): Promise<void> {
    return this.#registry.publish(services);
  }

  onRegistry(listener: (services: readonly Service[]) => void): () => void {
    return this.#registry.follower.listen(listener);
  }

  /**
   * Stores `keys` as the next key set and notifies every subscriber.
   * @throws {RedisUnavailableError} when Redis is unreachable (retried by itself on reconnect).
   */
  publishAssertionKeys(keys: AssertionKeySet): Promise<void> {
    return this.#assertionKeys.publish(keys);
  }

  onAssertionKeys(listener: (keys: AssertionKeySet) => void): () => void {
    return this.#assertionKeys.follower.listen(listener);
  }

  /**
   * PUBLISHes `report` (JSON) for the admin plane; not retried (the next report replaces it).
   * @throws {RedisUnavailableError} when Redis is unreachable or does not answer in time.
   */
  publishTargetHealth(report: TargetHealthReport): Promise<void> {
    return this.#targetHealth.publish(report);
  }

  /** Subscribes to the reports while a listener is left; a message that is no report is ignored. */
  onTargetHealth(listener: (report: TargetHealthReport) => void): () => void {
    return this.#targetHealth.listen(listener);
  }

  /**
   * Stores `challenges` as the next challenge set and notifies every subscriber.
   * @throws {RedisUnavailableError} when Redis is unreachable (retried by itself on reconnect).
   */
  publishAcmeChallenges(challenges: AcmeChallengeSet): Promise<void> {
    return this.#challenges.publish(challenges);
  }

  onAcmeChallenges(listener: (challenges: AcmeChallengeSet) => void): () => void {
    return this.#challenges.follower.listen(listener);
  }

  refreshAcmeChallenges(): Promise<void> {
    return this.#challenges.follower.refresh();
  }

  /**
   * Stores `notice` as the next certificate notice and notifies every subscriber.
   * @throws {RedisUnavailableError} when Redis is unreachable (retried by itself on reconnect).
   */
  publishCertificateNotice(notice: CertificateNotice): Promise<void> {
    return this.#certificates.publish(notice);
  }

  onCertificateNotice(listener: (notice: CertificateNotice) => void): () => void {
    return this.#certificates.follower.listen(listener);
  }

  /** Re-reads every snapshot now (a test hook and a readiness nudge); never rejects. */
  async refresh(): Promise<void> {
    await Promise.all([this.#registry.follower.refresh(), this.#assertionKeys.follower.refresh()]);
  }

  /** Stops publishing and following. The connections belong to the caller. */
  async close(): Promise<void> {
    this.#targetHealth.close();
    await Promise.all([this.#registry, this.#assertionKeys, this.#challenges, this.#certificates].map((topic) => topic.close()));
  }
}

/** One topic's publisher and follower, each made on its first use (its subscription and version check with it). */
class Topic<T> {
  readonly #make: { publisher(): SnapshotPublisher<T>; follower(): SnapshotFollower<T> };
  #publisher: SnapshotPublisher<T> | undefined;
  #follower: SnapshotFollower<T> | undefined;

  constructor(connections: RedisConnections, topic: SnapshotTopic<T>, versionCheckMs: number, logger: Logger) {
    this.#make = {
      publisher: () => new SnapshotPublisher(connections, topic, logger),
      follower: () => new SnapshotFollower(connections, topic, versionCheckMs, logger),
    };
  }

  get follower(): SnapshotFollower<T> {
    return (this.#follower ??= this.#make.follower());
  }

  /** Publishes `payload`; its own listeners have it before this resolves. */
  async publish(payload: T): Promise<void> {
    this.#publisher ??= this.#make.publisher();
    this.follower.offer(await this.#publisher.publish(payload));
  }

  async close(): Promise<void> {
    await this.#publisher?.close();
    await this.#follower?.close();
  }
}
