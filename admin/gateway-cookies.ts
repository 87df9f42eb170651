import { serialize, type SerializeOptions } from 'cookie';
import type { Config } from '../shared/config.js';
import { gatewayCookieNames } from '../shared/cookies.js';
import { LOGIN_TRANSACTION_TTL_MS } from './oidc/login-transactions.js';

/**
 * `Set-Cookie` values for the gateway's own cookies (DESIGN §4, RFC 6265bis). All are HttpOnly,
 * Path=/, and Secure on an https PUBLIC_URL (where their names carry `__Host-`).
 */
export class GatewayCookies {
  readonly #names;
  readonly #secure: boolean;

  constructor(config: Config) {
    this.#names = gatewayCookieNames(config.publicUrl);
    this.#secure = config.publicUrl.protocol === 'https:';
  }

  /** The session cookie: SameSite=Lax, lives as long as the session (`maxAgeMs`). */
  session(sessionId: string, maxAgeMs: number): string {
    return serialize(this.#names.session, sessionId, { ...this.#base(), sameSite: 'lax', maxAge: Math.floor(maxAgeMs / 1000) });
  }

  clearSession(): string {
    return serialize(this.#names.session, '', { ...this.#base(), sameSite: 'lax', maxAge: 0 });
  }

  /**
   * The login-transaction cookie, holding the `state`. It must come back on the identity
   * provider's cross-site form POST: on https that takes SameSite=None (with Secure); plain http
   * cannot use None, so it omits SameSite, which browsers treat as Lax but still send on a
   * top-level cross-site POST within two minutes (Chrome's "Lax+POST"); same-site setups such as
   * localhost work either way.
   */
  transaction(state: string): string {
    const sameSite: SerializeOptions['sameSite'] = this.#secure ? 'none' : undefined;
    return serialize(this.#names.transaction, state, { ...this.#base(), sameSite, maxAge: LOGIN_TRANSACTION_TTL_MS / 1000 });
  }

  clearTransaction(): string {
    return serialize(this.#names.transaction, '', { ...this.#base(), maxAge: 0 });
  }

  get names() {
    return this.#names;
  }

  #base(): SerializeOptions {
    return { httpOnly: true, path: '/', secure: this.#secure };
  }
}
