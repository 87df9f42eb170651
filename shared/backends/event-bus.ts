import type { AssertionKeySet } from '../identity/assertion-key-set.js';
import type { Service, TargetHealthReport } from '../types.js';

/**
 * How the admin plane tells the data plane about what it owns, as whole snapshots, never deltas,
 * so a subscriber that missed a notice is never wrong for longer than it takes to read the next
 * one:
 * - the registry (enabled and disabled services), after every committed change; subscribers
 *   replace their route table with it;
 * - the identity assertion's keys (design.md §4.7), at start and after every rotation or expiry of
 *   a retired key; subscribers sign with its signing key and publish its public keys.
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
  close(): Promise<void>;
}
