import type { AssertionKeySet } from '../identity/assertion-key-set.js';
import type { AcmeChallengeSet, CertificateNotice } from '../tls/acme-messages.js';
import type { Service, TargetHealthReport } from '../types.js';

/**
 * How the admin plane tells the data plane about what it owns, as whole snapshots, never deltas,
 * so a subscriber that missed a notice is never wrong for longer than it takes to read the next
 * one:
 * - the registry (enabled and disabled services), after every committed change; subscribers
 *   replace their route table with it;
 * - the identity assertion's keys (design.md §4.7), at start and after every rotation or expiry of
 *   a retired key; subscribers sign with its signing key and publish its public keys;
 * - with ACME on (design.md §4.15), the challenges under way, which every listener answers, and a
 *   notice of the certificates held (no private key: listeners fetch those from the admin process).
 */
export interface EventBus {
  /** Publishes a new registry snapshot. Resolves once subscribers can read it. */
  publishRegistry(services: readonly Service[]): Promise<void>;
  /**
   * Calls `listener` with the latest snapshot now (when one exists) and after every change.
   * Returns a function that unsubscribes.
   */
  onRegistry(listener: (services: readonly Service[]) => void): () => void;
  /** Publishes a new assertion key set (its signing key is secret). Resolves once subscribers can read it. */
  publishAssertionKeys(keys: AssertionKeySet): Promise<void>;
  /**
   * Calls `listener` with the latest key set now (when one exists) and after every change.
   * Returns a function that unsubscribes.
   */
  onAssertionKeys(listener: (keys: AssertionKeySet) => void): () => void;
  /**
   * Publishes what one proxy process sees of its targets (the other direction: data plane to admin
   * plane). Fire and forget: a report lost is replaced by the next, a few seconds later.
   */
  publishTargetHealth(report: TargetHealthReport): Promise<void>;
  /**
   * Calls `listener` with every target health report any proxy process publishes from now on (no
   * replay of older ones). Returns a function that unsubscribes.
   */
  onTargetHealth(listener: (report: TargetHealthReport) => void): () => void;
  /** Publishes the ACME challenges under way (shared/tls/acme-messages.ts). Resolves once subscribers can read them. */
  publishAcmeChallenges(challenges: AcmeChallengeSet): Promise<void>;
  /** Calls `listener` with the latest challenge set now (when one exists) and after every change. Returns its removal. */
  onAcmeChallenges(listener: (challenges: AcmeChallengeSet) => void): () => void;
  /**
   * Reads the challenge set again now (a CA may ask a proxy process for a challenge a moment before
   * its notice arrives); resolves when done, never rejects.
   */
  refreshAcmeChallenges(): Promise<void>;
  /** Publishes which certificates the admin process holds (public parts only). Resolves once subscribers can read it. */
  publishCertificateNotice(notice: CertificateNotice): Promise<void>;
  /** Calls `listener` with the latest notice now (when one exists) and after every change. Returns its removal. */
  onCertificateNotice(listener: (notice: CertificateNotice) => void): () => void;
  close(): Promise<void>;
}
