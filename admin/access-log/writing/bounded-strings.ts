/**
 * What one remembered string is taken to cost, in bytes: 2 per UTF-16 code unit (V8 keeps a string
 * in one byte per character when every character fits, else two: this is the upper bound), plus
 * {@link ENTRY_BYTES} for its entry (the map's slot, the string's header, the value).
 */
export function stringBytes(text: string): number {
  return ENTRY_BYTES + 2 * text.length;
}

/** Bytes an entry of a {@link BoundedStrings} is taken to cost beside its string's characters. */
export const ENTRY_BYTES = 64;

/**
 * A map keyed by strings whose memory is bounded in bytes, whatever the strings: its entries'
 * estimated cost ({@link stringBytes}) never exceeds `maxBytes`. An entry that would take it past
 * the bound makes it forget every entry first (it starts over, as a cache of a day's strings
 * may: what it forgot is looked up again); a string bigger than the bound on its own is not kept.
 */
export class BoundedStrings<V> {
  readonly maxBytes: number;
  readonly #entries = new Map<string, V>();
  #bytes = 0;

  /** `maxBytes`: the most its entries may cost, estimated by {@link stringBytes}. */
  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** The estimated bytes its entries cost now (at most `maxBytes`). */
  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): V | undefined {
    return this.#entries.get(key);
  }

  /** Keeps `value` for `key`, forgetting every entry first when it would not fit. */
  set(key: string, value: V): void {
    if (this.#entries.has(key)) {
      this.#entries.set(key, value);
      return;
    }
    const cost = stringBytes(key);
    if (cost > this.maxBytes) return;
    if (this.#bytes + cost > this.maxBytes) this.clear();
    this.#entries.set(key, value);
    this.#bytes += cost;
  }

  /** Forgets `key`; false when it was not kept. */
  delete(key: string): boolean {
    if (!this.#entries.delete(key)) return false;
    this.#bytes -= stringBytes(key);
    return true;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}
