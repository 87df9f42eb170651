import { randomFillSync } from 'node:crypto';

/** Random bytes drawn at once and handed out in slices: one system call per 4 KiB of ids. */
const POOL_BYTES = 4096;

const pool = Buffer.alloc(POOL_BYTES);
/** `pool` as lowercase hex, encoded once per refill: an id is then a slice of it, not a concatenation. */
let poolHex = '';
let offset = POOL_BYTES;

/**
 * `bytes` random bytes (from node:crypto's CSPRNG) as lowercase hex, never all zero (W3C Trace
 * Context §3.2.2.3: an all-zero id is invalid). About 20 ns for 8 or 16 bytes: ids are drawn on
 * every request. The id shares its memory with the pool's 8 KiB hex string (a V8 sliced string)
 * while it lives.
 */
export function randomHex(bytes: number): string {
  for (;;) {
    if (offset + bytes > POOL_BYTES) {
      randomFillSync(pool);
      poolHex = pool.toString('hex');
      offset = 0;
    }
    const start = offset;
    offset += bytes;
    for (let i = start; i < offset; i++) {
      if (pool[i] !== 0) return poolHex.slice(2 * start, 2 * offset);
    }
  }
}

/** A new trace id (W3C Trace Context §3.2.2.3): 16 random bytes, 32 hex characters. */
export const newTraceId = (): string => randomHex(16);
/** A new span id (§3.2.2.4): 8 random bytes, 16 hex characters. */
export const newSpanId = (): string => randomHex(8);
/** A new request id (design.md §3.10): 8 random bytes, 16 hex characters. */
export const newRequestId = (): string => randomHex(8);
