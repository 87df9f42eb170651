import type { AssertionKeySet } from '../../identity/assertion-key-set.js';
import type { EventBus } from '../event-bus.js';
import type { AcmeChallengeSet, CertificateNotice } from '../../tls/acme-messages.js';
import type { Service, TargetHealthReport } from '../../types.js';

/** Embedded {@link EventBus}: both planes in one process, so a snapshot is handed over directly. */
export class MemoryEventBus implements EventBus {
  readonly #registry = new LatestValue<readonly Service[]>();
  readonly #assertionKeys = new LatestValue<AssertionKeySet>();
  readonly #targetHealth = new Set<(report: TargetHealthReport) => void>();
  readonly #challenges = new LatestValue<AcmeChallengeSet>();
  readonly #certificates = new LatestValue<CertificateNotice>();

  async publishRegistry(services: readonly Service[]): Promise<void> {
    this.#registry.set(services);
  }

  onRegistry(listener: (services: readonly Service[]) => void): () => void {
    return this.#registry.listen(listener);
  }

  async publishAssertionKeys(keys: AssertionKeySet): Promise<void> {
    this.#assertionKeys.set(keys);
  }

  onAssertionKeys(listener: (keys: AssertionKeySet) => void): () => void {
    return this.#assertionKeys.listen(listener);
  }

  async publishTargetHealth(report: TargetHealthReport): Promise<void> {
    for (const listener of this.#targetHealth) listener(report);
  }

  onTargetHealth(listener: (report: TargetHealthReport) => void): () => void {
    this.#targetHealth.add(listener);
    return () => this.#targetHealth.delete(listener);
  }

  async publishAcmeChallenges(challenges: AcmeChallengeSet): Promise<void> {
    this.#challenges.set(challenges);
  }

  onAcmeChallenges(listener: (challenges: AcmeChallengeSet) => void): () => void {
    return this.#challenges.listen(listener);
  }

  /** Nothing to read again: a publication reaches the listeners before it resolves. */
  async refreshAcmeChallenges(): Promise<void> {}

  async publishCertificateNotice(notice: CertificateNotice): Promise<void> {
    this.#certificates.set(notice);
  }

  onCertificateNotice(listener: (notice: CertificateNotice) => void): () => void {
    return this.#certificates.listen(listener);
  }

  async close(): Promise<void> {
    this.#targetHealth.clear();
    this.#challenges.clear();
    this.#certificates.clear();
    this.#registry.clear();
    this.#assertionKeys.clear();
  }
}

/** The latest value of one kind and its listeners, each told at once and after every change. */
class LatestValue<T> {
  #value: T | undefined;
  readonly #listeners = new Set<(value: T) => void>();

  set(value: T): void {
    this.#value = value;
    for (const listener of this.#listeners) listener(value);
  }

  listen(listener: (value: T) => void): () => void {
    this.#listeners.add(listener);
    if (this.#value !== undefined) listener(this.#value);
    return () => this.#listeners.delete(listener);
  }

  clear(): void {
    this.#listeners.clear();
  }
}
