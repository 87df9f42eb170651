import type { EventBus } from '../event-bus.js';
import type { Service } from '../../types.js';

/** Embedded {@link EventBus}: both planes in one process, so a snapshot is handed over directly. */
export class MemoryEventBus implements EventBus {
  #snapshot: readonly Service[] | undefined;
  readonly #listeners = new Set<(services: readonly Service[]) => void>();

  async publishRegistry(services: readonly Service[]): Promise<void> {
    this.#snapshot = services;
    for (const listener of this.#listeners) listener(services);
  }

  onRegistry(listener: (services: readonly Service[]) => void): () => void {
    this.#listeners.add(listener);
    if (this.#snapshot) listener(this.#snapshot);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
