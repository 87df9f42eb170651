import { serialize, type SerializeOptions } from 'cookie';
import { gatewayCookieNames, type GatewayCookieNames } from '../../shared/http/cookies.js';
import { LOGIN_TRANSACTION_TTL_MS } from '../oidc/login-transactions.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * `Set-Cookie` values for the gateway's own cookies on one origin (design.md §4, RFC 6265bis): the
 * public origin's (`gw_session`, `gw_oidc`) or ADMIN_URL's (`gw_admin_session`, `gw_admin_oidc`,
 * design.md §4.5). All are HttpOnly, Path=/, and Secure on an https origin (where their names carry
 * `__Host-`).
 */
export class GatewayCookies {
  readonly names: GatewayCookieNames;
  readonly #secure: boolean;
  /** https, or http on a loopback host, which browsers treat as a secure context (W3C Secure Contexts §3.1). */
  readonly #secureContext: boolean;

  /** Cookies of the origin `url` (PUBLIC_URL, or ADMIN_URL with `kind` `admin`). */
  constructor(url: URL, kind: 'public' | 'admin' = 'public') {
    this.names = gatewayCookieNames(url, kind);
    this.#secure = url.protocol === 'https:';
    this.#secureContext = this.#secure || LOOPBACK_HOSTS.has(url.hostname);
  }

  /** The session cookie: SameSite=Lax, lives as long as the session (`maxAgeMs`). */
  session(sessionId: string, maxAgeMs: number): string {
    return serialize(this.names.session, sessionId, { ...this.#base(), sameSite: 'lax', maxAge: Math.floor(maxAgeMs / 1000) });
  }

  clearSession(): string {
    return serialize(this.names.session, '', { ...this.#base(), sameSite: 'lax', maxAge: 0 });
  }

  /** Clears a service host's hand-off cookie (design.md §4.16), once the hand-off is redeemed. */
  clearHandoff(): string {
    return serialize(this.names.handoff, '', { ...this.#base(), sameSite: 'lax', maxAge: 0 });
  }

  /**
   * The login-transaction cookie, holding the browser key that binds this browser's logins to it
   * (see oidc/browser-binding.ts); it lives as long as a login may take. It must come back on the
   * identity provider's cross-site form POST, which takes `SameSite=None; Secure` (RFC 6265bis
   * §5.4.7). Browsers accept Secure cookies on https and on http loopback hosts (localhost,
   * 127.0.0.1); elsewhere on plain http SameSite is omitted (Lax by default), which works when the
   * identity provider is same-site.
   */
  transaction(browserKey: string): string {
    const options: SerializeOptions = this.#secureContext
      ? { ...this.#base(), secure: true, sameSite: 'none' }
      : this.#base();
    return serialize(this.names.transaction, browserKey, { ...options, maxAge: LOGIN_TRANSACTION_TTL_MS / 1000 });
  }

  #base(): SerializeOptions {
    return { httpOnly: true, path: '/', secure: this.#secure };
  }
}
