import { serialize, type SerializeOptions } from 'cookie';
import type { Config } from '../shared/config.js';
import { gatewayCookieNames } from '../shared/cookies.js';
import { LOGIN_TRANSACTION_TTL_MS } from './oidc/login-transactions.js';
import { pendingStatesValue } from './oidc/pending-logins.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `Set-Cookie` values for the gateway's own cookies (DESIGN §4, RFC 6265bis). All are HttpOnly,
 * Path=/, and Secure on an https PUBLIC_URL (where their names carry `__Host-`).
 */
export class GatewayCookies {
  readonly #names;
  readonly #secure: boolean;
  /** https, or http on a loopback host, which browsers treat as a secure context (W3C Secure Contexts §3.1). */
  readonly #secureContext: boolean;

  constructor(config: Config) {
    this.#names = gatewayCookieNames(config.publicUrl);
    this.#secure = config.publicUrl.protocol === 'https:';
    this.#secureContext = this.#secure || LOOPBACK_HOSTS.has(config.publicUrl.hostname);
  }

  /** The session cookie: SameSite=Lax, lives as long as the session (`maxAgeMs`). */
  session(sessionId: string, maxAgeMs: number): string {
    return serialize(this.#names.session, sessionId, { ...this.#base(), sameSite: 'lax', maxAge: Math.floor(maxAgeMs / 1000) });
  }

  clearSession(): string {
    return serialize(this.#names.session, '', { ...this.#base(), sameSite: 'lax', maxAge: 0 });
  }

  /**
   * The login-transaction cookie, holding the `state`s of the browser's pending logins (see
   * oidc/pending-logins.ts), or cleared when there are none left. It must come back on the identity
   * provider's cross-site form POST, which takes `SameSite=None; Secure` (RFC 6265bis §5.4.7).
   * Browsers accept Secure cookies on https and on http loopback hosts (localhost, 127.0.0.1);
   * elsewhere on plain http SameSite is omitted (Lax by default), which works when the identity
   * provider is same-site.
   */
  transaction(states: readonly string[]): string {
    if (states.length === 0) return this.clearTransaction();
    const options: SerializeOptions = this.#secureContext
      ? { ...this.#base(), secure: true, sameSite: 'none' }
      : this.#base();
    return serialize(this.#names.transaction, pendingStatesValue(states), { ...options, maxAge: LOGIN_TRANSACTION_TTL_MS / 1000 });
  }

  clearTransaction(): string {
    return serialize(this.#names.transaction, '', { ...this.#base(), secure: this.#secureContext, maxAge: 0 });
  }

  get names() {
    return this.#names;
  }

  #base(): SerializeOptions {
    return { httpOnly: true, path: '/', secure: this.#secure };
  }
}
