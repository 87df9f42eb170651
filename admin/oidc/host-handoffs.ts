import type { Database, Statement } from 'better-sqlite3';
import { sessionKey } from '../../shared/backends/session-store.js';
import { isWellFormedSecret, newSessionId } from '../../shared/identity/secrets.js';

/** How long a hand-off code may be redeemed, in ms (design.md §4.16: at most 60 s). */
export const HANDOFF_CODE_TTL_MS = 60_000;

/** What a hand-off code stands for. Secret as a whole: never logged. */
export interface HostHandoff {
  /** The handle of the session handed over. */
  handle: string;
  /** The service host (normal form) the code may be redeemed on, alone. */
  host: string;
  /** Where on that host the browser goes once signed in: a path and query (return-address.ts). */
  returnTo: string;
  /** `handoffBinding` (shared/identity/secrets.ts) of the browser's `gw_handoff` cookie on that host. */
  binding: string;
}

/**
 * One-time codes by which the sign-in origin hands a session to a service host (design.md §4.16),
 * in the admin's SQLite, keyed by the code's SHA-256 (the code itself is never stored). A code
 * lives {@link HANDOFF_CODE_TTL_MS} and is consumed by the first attempt to redeem it, whatever
 * that attempt's outcome, so a code seen by anyone else (a log, a referrer) is worth one try at most.
 */
export class HostHandoffs {
  readonly #insert: Statement<[string, string, number]>;
  readonly #take: Statement<[string, number], { data: string; live: number }>;
  readonly #purge: Statement<[number]>;

  constructor(db: Database) {
    this.#insert = db.prepare('INSERT INTO host_handoff_codes (key, data, expires_at) VALUES (?, ?, ?)');
    this.#take = db.prepare('DELETE FROM host_handoff_codes WHERE key = ? RETURNING data, expires_at > ? AS live') as Statement<[string, number], { data: string; live: number }>;
    this.#purge = db.prepare('DELETE FROM host_handoff_codes WHERE expires_at <= ?');
  }

  /** A new code (256 random bits, base64url) for `handoff`. */
  issue(handoff: HostHandoff): string {
    const code = newSessionId();
    const now = Date.now();
    this.#purge.run(now);
    this.#insert.run(sessionKey(code), JSON.stringify(handoff), now + HANDOFF_CODE_TTL_MS);
    return code;
  }

  /** Consumes `code`: what it stood for while unexpired, else (unknown, used, expired) null. */
  take(code: string | null): HostHandoff | null {
    if (code === null || !isWellFormedSecret(code)) return null;
    const row = this.#take.get(sessionKey(code), Date.now());
    return row !== undefined && row.live === 1 ? (JSON.parse(row.data) as HostHandoff) : null;
  }
}
