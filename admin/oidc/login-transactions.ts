import type { Database, Statement } from 'better-sqlite3';
import { sessionKey } from '../../shared/backends/session-store.js';
import { constantTimeEqual } from '../../shared/identity/secrets.js';
import { browserKeyHash } from './browser-binding.js';
import type { StepUpRequest } from '../../shared/identity/step-up.js';
import type { HostHandoff } from './host-handoffs.js';

/** How long a login may take at the identity provider, in ms. */
export const LOGIN_TRANSACTION_TTL_MS = 10 * 60_000;

/** What the callback needs to finish a login (OIDC Core 1.0 §3.1.2.1, RFC 7636). Secret: never logged. */
export interface LoginTransaction {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** A same-origin relative path (see return-to.ts), or an address on ADMIN_URL's origin (return-address.ts). */
  returnTo: string;
  /** When the sign-in is for a service host (design.md §4.16): what to hand it once signed in. */
  handoff?: Omit<HostHandoff, 'handle'>;
  /**
   * A step-up sign-in (design.md §4.18): what the authorization request asked (`max_age`,
   * `acr_values`), which the callback checks the ID token against, and after which it updates the
   * browser's session in place.
   */
  stepUp?: StepUpRequest;
  /**
   * With `stepUp`: the handle of the session the browser had when it started (its cookie comes with
   * that top-level GET; a `form_post` callback is a cross-site POST, which a SameSite=Lax cookie
   * does not come with). The transaction is this browser's alone, so it names no one else's session.
   */
  sessionHandle?: string;
  /** The `redirect_uri` the authorization request named: the token request must repeat it (RFC 6749 §4.1.3). */
  redirectUri: string;
  /** SHA-256 (hex) of the browser key in the starting browser's transaction cookie (browser-binding.ts). */
  browserKeyHash: string;
}

/** Why {@link LoginTransactions.take} found nothing to finish. */
export type TakeFailure = 'unknown' | 'other-browser';

/**
 * Pending logins, server-side in SQLite, keyed by the SHA-256 of their `state`. Each can be taken
 * once, and only by the browser that started it: a replayed callback finds nothing, and a callback
 * from another browser leaves the transaction for its owner.
 */
export class LoginTransactions {
  readonly #db: Database;
  readonly #insert: Statement<[string, string, number]>;
  readonly #find: Statement<[string, number], { data: string }>;
  readonly #delete: Statement<[string]>;
  readonly #purge: Statement<[number]>;

  constructor(db: Database) {
    this.#db = db;
    this.#insert = db.prepare('INSERT INTO login_transactions (key, data, expires_at) VALUES (?, ?, ?)');
    this.#find = db.prepare('SELECT data FROM login_transactions WHERE key = ? AND expires_at > ?');
    this.#delete = db.prepare('DELETE FROM login_transactions WHERE key = ?');
    this.#purge = db.prepare('DELETE FROM login_transactions WHERE expires_at <= ?');
  }

  save(transaction: LoginTransaction): void {
    const now = Date.now();
    this.#purge.run(now);
    this.#insert.run(sessionKey(transaction.state), JSON.stringify(transaction), now + LOGIN_TRANSACTION_TTL_MS);
  }

  /**
   * Removes and returns the transaction for `state` when `browserKey` (from the callback's
   * transaction cookie) is the one it was started with, compared in constant time. Otherwise
   * returns why not, and leaves a transaction of another browser in place.
   */
  take(state: string, browserKey: string | undefined): LoginTransaction | TakeFailure {
    return this.#db.transaction((): LoginTransaction | TakeFailure => {
      const key = sessionKey(state);
      const row = this.#find.get(key, Date.now());
      if (!row) return 'unknown';
      const transaction = JSON.parse(row.data) as LoginTransaction;
      if (browserKey === undefined || !constantTimeEqual(browserKeyHash(browserKey), transaction.browserKeyHash ?? '')) {
        return 'other-browser';
      }
      this.#delete.run(key);
      return transaction;
    }).immediate(); // reads, then writes: IMMEDIATE, see ServiceRegistry's #write
  }
}
