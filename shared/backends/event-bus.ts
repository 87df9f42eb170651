import type { Service } from '../types.js';

/**
 * How the admin plane tells the data plane about registry changes. The admin publishes the whole
 * registry (enabled and disabled services) after every committed change; subscribers replace their
 * route table with it. Snapshots, not deltas, so a subscriber that missed a notice is never wrong
 * for longer than it takes to read the next one.
 */
export interface EventBus {
  /** Publishes a new registry snapshot. Resolves once subscribers can read it. */
  publishRegistry(services: readonly Service[]): Promise<void>;
  /**
   * Calls `listener` with the latest snapshot now (when one exists) and after every change.
   * Returns a function that unsubscribes.
   */
  onRegistry(listener: (services: readonly Service[]) => void): () => void;
  close(): Promise<void>;
}
