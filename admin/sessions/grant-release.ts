import { errorCode } from '../../shared/error-code.js';
import type { Logger } from '../../shared/logger.js';
import type { TokenCipher } from '../../shared/identity/token-encryption.js';
import type { Session } from '../../shared/types.js';
import type { RelyingParty } from '../oidc/relying-party.js';

/**
 * Gives back to the identity provider the refresh tokens of sessions that ended (RFC 7009): an
 * `offline_access` grant outlives the provider's own sign-out at many providers (oidc-provider,
 * Keycloak's offline sessions), so without this a token the gateway dropped would stay good there
 * for weeks. Beside the caller: a sign-out never waits for the provider, and a provider that is
 * down or has no revocation endpoint changes nothing here (logged, never the token).
 */
export class GrantRelease {
  readonly #relyingParty: RelyingParty;
  readonly #cipher: TokenCipher;
  readonly #logger: Logger;

  constructor(relyingParty: RelyingParty, cipher: TokenCipher, logger: Logger) {
    this.#relyingParty = relyingParty;
    this.#cipher = cipher;
    this.#logger = logger;
  }

  /**
   * Revokes each session's refresh token at the provider, in the background; a failure is logged on
   * `logger` (a request's, so its line names the request's id), else the plane's.
   */
  release(sessions: readonly Session[], logger = this.#logger): void {
    for (const session of sessions) {
      if (session.refreshToken === undefined) continue;
      let token: string;
      try {
        token = this.#cipher.decrypt(session.refreshToken, session.handle);
      } catch {
        continue; // sealed under a key no longer configured: nothing the gateway can give back
      }
      this.#relyingParty.revokeRefreshToken(token).catch((error: unknown) => {
        logger.warn({ code: errorCode(error), name: (error as Error)?.name }, 'revoking a refresh token at the provider failed');
      });
    }
  }
}
