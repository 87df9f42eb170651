import type { TargetHealth } from './target-health.js';

/**
 * Where a target sits and the public prefix it serves: what moves paths, `Location` and cookie
 * paths between the two sides (path-mapping.ts, response-headers.ts).
 */
export interface TargetMapping {
  /** The service path as a prefix: `''` for `/`, otherwise `/seg(/seg)*` (no trailing slash). */
  readonly prefix: string;
  /** The target's origin (`http://host:port`), as WHATWG URL serialises it; the connection pool's key. */
  readonly origin: string;
  /** The target's base path without a trailing slash: `''` when the target has none. */
  readonly basePath: string;
}

/** One target of a route, prepared once per registry snapshot. */
export interface RouteTarget extends TargetMapping {
  /** As registered. */
  readonly url: string;
  /** 1–100. */
  readonly weight: number;
  /** Its state and counts, kept across snapshots (target-health-book.ts). */
  readonly health: TargetHealth;
  /** What the sticky cookie names it by (sticky-target.ts): opaque, never its address. */
  readonly stickyId: string;
  /** Its url's hash, which client-ip hashing combines with the address. */
  readonly hashSeed: number;
}
