import type { Database, Statement } from 'better-sqlite3';
import { sessionKey } from '../../shared/session-store.js';

/** How long a login may take at the identity provider, in ms. */
export const LOGIN_TRANSACTION_TTL_MS = 10 * 60_000;

/** What the callback needs to finish a login (OIDC Core 1.0 §3.1.2.1, RFC 7636). Secret: never logged. */
export interface LoginTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** A same-origin relative path (see return-to.ts). */
  returnTo: string;
}

/**
 * Pending logins, server-side in SQLite, keyed by the SHA-256 of their `state`. Each can be taken
 * once: a replayed callback finds nothing. The browser holds only the state, in the transaction
 * cookie, which binds the login to the browser that started it.
 */
export class LoginTransactions {
  readonly #insert: Statement<[string, string, number]>;
  readonly #take: Statement<[string, number], { data: string }>;
  readonly #purge: Statement<[number]>;

  constructor(db: Database) {
    this.#insert = db.prepare('INSERT INTO login_transactions (key, data, expires_at) VALUES (?, ?, ?)');
    this.#take = db.prepare('DELETE FROM login_transactions WHERE key = ? AND expires_at > ? RETURNING data');
    this.#purge = db.prepare('DELETE FROM login_transactions WHERE expires_at <= ?');
  }

  save(transaction: LoginTransaction): void {
    const now = Date.now();
    this.#purge.run(now);
    this.#insert.run(sessionKey(transaction.state), JSON.stringify(transaction), now + LOGIN_TRANSACTION_TTL_MS);
  }

  /** Removes and returns the transaction for `state`; null when unknown, used or expired. */
  take(state: string): LoginTransaction | null {
    const row = this.#take.get(sessionKey(state), Date.now());
    return row ? (JSON.parse(row.data) as LoginTransaction) : null;
  }
}
