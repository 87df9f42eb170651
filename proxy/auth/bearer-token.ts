import { createHash } from 'node:crypto';
import { jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../../shared/config/config.js';
import { errorCode } from '../../shared/error-code.js';
import { GatewayError } from '../../shared/errors.js';
import { userFromClaims } from '../../shared/identity/identity-claims.js';
import { signInOf } from '../../shared/identity/step-up.js';
import type { Logger } from '../../shared/logger.js';
import type { SessionUser } from '../../shared/types.js';
import { IssuerKeys } from '../../shared/identity/issuer-keys.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { RequestTrace } from '../../shared/tracing/request-trace.js';
import { SpanKind } from '../../shared/tracing/span-export.js';

/**
 * Signature algorithms a bearer token may use: asymmetric ones only (RFC 7518 §3.3–3.5, RFC 8037),
 * so neither `none` nor an HMAC keyed with a public key (the "algorithm confusion" attack) passes.
 */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** Clock skew allowed on `exp` and `nbf`, in seconds (design.md §4.7). */
const CLOCK_TOLERANCE_SECONDS = 5;
/** Verified tokens kept at most (see {@link ExpiringCache}). */
const CACHE_ENTRIES = 10_000;

/**
 * The `Bearer` auth-scheme, any case (RFC 9110 §11.1), then the credentials after its spaces (a
 * tab read as one too, as lenient servers do, so no spelling of the scheme escapes the rules).
 */
const BEARER = /^bearer(?:[ \t]+(.*))?$/is;

/**
 * The credentials of an `Authorization` field value of the `Bearer` scheme (RFC 6750 §2.1), `''`
 * when it has none; undefined for any other scheme (`Basic`, `Digest`), which is not the gateway's.
 */
export function bearerCredentials(authorization: string): string | undefined {
  const match = BEARER.exec(authorization);
  return match === null ? undefined : (match[1] ?? '').trim();
}

/** The 401 for a token that fails any check (RFC 6750 §3.1 `invalid_token`). */
function invalidToken(): GatewayError {
  return new GatewayError('NOT_AUTHENTICATED', { headers: { 'www-authenticate': 'Bearer error="invalid_token"' } });
}

/**
 * Machine clients on protected services (design.md §4.7): the caller of a request's
 * `Authorization: Bearer <JWT>`, from the token's claims (shared/identity/identity-claims.ts, as a session's
 * user is made, so an access policy reads both alike), with its `auth_time`, `acr` and `amr`
 * (step-up.ts `signInOf`), which a service's step-up checks as a session's (design.md §4.18).
 * The token must be signed by OIDC_ISSUER's key (issuer-keys.ts) with an asymmetric algorithm, carry `iss` = the issuer, an `aud` among
 * OIDC_API_AUDIENCES, a `sub`, and an `exp`, with `exp` and `nbf` holding within 5 s of skew.
 * Verified tokens are remembered until their `exp` (an ExpiringCache, shared/expiring-cache.ts).
 */
export class BearerTokens {
  readonly #config: Config;
  readonly #audiences: string[];
  readonly #keys: IssuerKeys;
  readonly #logger: Logger;
  readonly #verified = new ExpiringCache<SessionUser>(CACHE_ENTRIES);
  /** The header of a 401 for a request without credentials (RFC 6750 §3: the scheme, no error code). */
  readonly challenge: Record<string, string> = { 'www-authenticate': 'Bearer' };

  constructor(config: Config, issuer: URL, logger: Logger) {
    this.#config = config;
    this.#audiences = [...config.oidc.apiAudiences];
    this.#keys = new IssuerKeys(issuer, logger);
    this.#logger = logger;
  }

  /**
   * The caller of `authorization` (the request's `Authorization` field value), or undefined when
   * it carries no `Bearer` credentials. A traced request (`trace`, sampled) gets a `bearer token`
   * span around a verification (not around a token remembered as verified).
   * @throws {GatewayError} NOT_AUTHENTICATED (401 with `WWW-Authenticate: Bearer
   *   error="invalid_token"`) for a token that fails any check; IDENTITY_PROVIDER_UNAVAILABLE (503)
   *   when the issuer's keys are needed and cannot be fetched.
   */
  async user(authorization: string | undefined, trace?: RequestTrace): Promise<SessionUser | undefined> {
    const token = authorization === undefined ? undefined : bearerCredentials(authorization);
    if (token === undefined) return undefined;
    const hash = createHash('sha256').update(token).digest('base64url');
    const cached = this.#verified.get(hash, Date.now());
    if (cached !== undefined) return cached;
    // A token not verified before: the issuer's keys (fetched when not held) and the signature.
    const span = trace?.child('bearer token', SpanKind.INTERNAL, {});
    try {
      return await this.#verify(token, hash);
    } finally {
      span?.end();
    }
  }

  async #verify(token: string, hash: string): Promise<SessionUser> {
    const { issuer, key } = await this.#keys.keySet();
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(token, key, {
        issuer,
        audience: this.#audiences,
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['sub', 'exp'],
      }));
      if (typeof claims.sub !== 'string' || claims.sub === '') throw invalidToken();
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      // The reason only (jose's error code): the token itself is a credential.
      this.#logger.debug({ reason: errorCode(error) ?? (error as Error).name }, 'bearer token refused');
      throw invalidToken();
    }
    // the token's auth_time, acr and amr, for a service's step-up (design.md §4.18, RFC 9470)
    const user = { ...userFromClaims(claims, this.#config), ...signInOf(claims) };
    this.#verified.set(hash, user, claims.exp! * 1000);
    return user;
  }
}

/** The bearer-token check of `config`, or undefined when OIDC_API_AUDIENCES leaves bearer tokens off. */
export function bearerTokensFor(config: Config, logger: Logger): BearerTokens | undefined {
  const { issuer, apiAudiences } = config.oidc;
  return issuer === undefined || apiAudiences.length === 0 ? undefined : new BearerTokens(config, issuer, logger);
}
