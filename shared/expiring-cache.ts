/**
 * A process-local, bounded cache whose entries each serve until their own expiry: the data plane's
 * verified bearer tokens and signed identity assertions, and the session stores' confirmed
 * sessions. Past `maxEntries`, the entry stored longest ago goes first (a Map keeps insertion
 * order; storing a key again re-inserts it). Times are epoch ms, passed in by the caller, which
 * reads the clock once per request.
 */
export class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #maxEntries: number;

  constructor(maxEntries: number) {
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value stored under `key` while `now` is before its expiry; an expired entry is dropped. */
  get(key: string, now: number): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (now < entry.expiresAt) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Stores `value` under `key` until `expiresAt`. */
  set(key: string, value: V, expiresAt: number): void {
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt });
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
