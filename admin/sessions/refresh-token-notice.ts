import type { Config } from '../../shared/config/config.js';
import type { Logger } from '../../shared/logger.js';

/**
 * Says once per process, at the first sign-in without one, that the identity provider issues no
 * refresh token: such sessions are never re-checked at the provider (session-revalidator.ts needs
 * the token), so a user removed there keeps access until SESSION_TTL, and an operator who counted
 * on SESSION_REVALIDATE must learn it from the log, not from an incident. Once, not per sign-in:
 * it is the provider's setting, the same for every user.
 */
export class RefreshTokenNotice {
  readonly #logger: Logger;
  readonly #message: string;
  #said = false;

  constructor(config: Pick<Config, 'oidc'>, logger: Logger) {
    this.#logger = logger;
    this.#message = noticeText(config);
  }

  /** Records a sign-in; `refreshToken` is what the provider's token response held (never logged). */
  signedIn(refreshToken: string | undefined): void {
    if (refreshToken !== undefined || this.#said) return;
    this.#said = true;
    this.#logger.warn(this.#message);
  }
}

/** The notice, with what to change: `offline_access` in OIDC_SCOPES when it is missing, the grant at the provider either way. */
function noticeText(config: Pick<Config, 'oidc'>): string {
  const lifetime = 'sessions are not re-checked at the provider (SESSION_REVALIDATE) and live their whole SESSION_TTL';
  const remedy = config.oidc.scopes.split(/\s+/).includes('offline_access')
    ? 'OIDC_SCOPES has offline_access: allow the client the refresh_token grant at the provider'
    : `add offline_access to OIDC_SCOPES ("${config.oidc.scopes} offline_access") and allow the client the refresh_token grant at the provider`;
  return `the identity provider issued no refresh token at sign-in: ${lifetime}; to get refresh tokens, ${remedy} (README: Re-checks at the provider)`;
}
