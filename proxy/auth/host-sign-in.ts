import type { ServerResponse } from 'node:http';
import { serialize } from 'cookie';
import { gatewayCookieNames } from '../../shared/http/cookies.js';
import { redirect } from '../../shared/http/http-response.js';
import { handoffBinding, newHandoffKey } from '../../shared/identity/secrets.js';
import { MAX_RETURN_ADDRESS_LENGTH } from '../../shared/http/return-to.js';
import { stepUpQuery, type StepUp } from '../../shared/identity/step-up.js';
import { serviceHostOrigin } from '../../shared/services/host-names.js';

/** How long a service host's hand-off cookie lives, in seconds: as long as a login may take (10 minutes). */
const HANDOFF_COOKIE_MAX_AGE_S = 600;

/**
 * Sends a browser on a service host to the sign-in origin (design.md §4.16): 302 to
 * `<PUBLIC_URL>/auth/login?rd=<the address asked for>&bind=<hash of a new hand-off key>`, with the
 * key in the host's own `gw_handoff` cookie (host-only, `__Host-` on https, HttpOnly, SameSite=Lax:
 * it must come back on the top-level navigation to the host's callback). The sign-in origin hands
 * the session back only to a browser holding that key, so a hand-off code made for one browser
 * cannot sign another in.
 */
export class HostSignIn {
  readonly #login: string;
  readonly #publicUrl: URL;
  readonly #cookieName: string;
  readonly #secure: boolean;

  constructor(publicUrl: URL) {
    this.#login = `${publicUrl.origin}/auth/login?rd=`;
    this.#publicUrl = publicUrl;
    this.#cookieName = gatewayCookieNames(publicUrl).handoff;
    this.#secure = publicUrl.protocol === 'https:';
  }

  /**
   * Answers with the redirect for `target` (a path and query, as requested) on `host` (normal form);
   * with `stepUp`, the sign-in asks the provider for it (`max_age`, `acr_values`: design.md §4.18).
   */
  send(res: ServerResponse, host: string, target: string, stepUp: StepUp = {}): void {
    const key = newHandoffKey();
    // The sign-in origin takes return addresses up to 2,048 characters (return-address.ts): past
    // that, the host's root, rather than a sign-in that cannot finish.
    const address = serviceHostOrigin(this.#publicUrl, host);
    const returnAddress = address.length + target.length > MAX_RETURN_ADDRESS_LENGTH ? `${address}/` : address + target;
    const cookie = serialize(this.#cookieName, key, { httpOnly: true, path: '/', sameSite: 'lax', secure: this.#secure, maxAge: HANDOFF_COOKIE_MAX_AGE_S });
    redirect(res, `${this.#login}${encodeURIComponent(returnAddress)}&bind=${handoffBinding(key)}${stepUpQuery(stepUp)}`, { 'set-cookie': cookie });
  }
}
