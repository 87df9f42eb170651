/** A listener that keeps what it receives, for tests of event emitters and subscriptions (not a test file itself). */

/** Records each value a listener receives, and resolves waits for a value that satisfies a test. */
export class Recorder<T> {
  readonly values: T[] = [];
  readonly #waiters = new Set<{ test: (value: T) => boolean; resolve: (value: T) => void }>();

  readonly listener = (value: T): void => {
    this.values.push(value);
    for (const waiter of this.#waiters) {
      if (waiter.test(value)) {
        this.#waiters.delete(waiter);
        waiter.resolve(value);
      }
    }
  };

  /** The first value (already received or to come) for which `test` holds; rejects after `timeoutMs`. */
  next(test: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
    const seen = this.values.find(test);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { test, resolve: (value: T) => (clearTimeout(timer), resolve(value)) };
      const timer = setTimeout(() => {
        this.#waiters.delete(waiter);
        reject(new Error(`no matching value within ${timeoutMs} ms (got ${this.values.length})`));
      }, timeoutMs);
      this.#waiters.add(waiter);
    });
  }
}
