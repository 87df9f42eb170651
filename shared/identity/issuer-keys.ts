import { createRemoteJWKSet, errors, type JWTVerifyGetKey } from 'jose';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { OutageLog } from '../outage-log.js';

/** Discovery and key-set requests give up after this long, in ms (jose's default for the key set). */
const FETCH_TIMEOUT_MS = 5_000;
/**
 * After a key set was fetched, an unknown `kid` fetches it again only this long later (design.md
 * §4.7: a rotated key is found within a second, and a stream of made-up `kid`s costs the identity
 * provider one request a second at most).
 */
const REFETCH_COOLDOWN_MS = 1_000;
/**
 * After discovery or a key-set fetch failed, the identity provider is asked again only this long
 * later; meanwhile tokens that need it are answered 503 at once, so an outage is not multiplied by
 * the request rate.
 */
const RETRY_AFTER_FAILURE_MS = 1_000;

/**
 * Key selection failures that are the token's, not the identity provider's: no key (or more than
 * one) in the issuer's set matches its header's `kid` and `alg` (RFC 7515 §4.1.4).
 */
const TOKEN_KEY_ERRORS: ReadonlySet<string> = new Set([errors.JWKSNoMatchingKey.code, errors.JWKSMultipleMatchingKeys.code]);

/** What a token is checked against: the issuer's exact identifier and its signing keys. */
export interface IssuerKeySet {
  /** The `issuer` of the discovery document, the exact `iss` its tokens carry. */
  issuer: string;
  /** A key resolver for jose's `jwtVerify` (throws {@link GatewayError} when the keys cannot be fetched). */
  key: JWTVerifyGetKey;
}

/**
 * The signing keys of OIDC_ISSUER as the data plane checks bearer tokens with them (design.md
 * §4.7), and the admin plane back-channel logout tokens. `jwks_uri` comes from the issuer's discovery document (OpenID Connect Discovery 1.0 §4,
 * whose `issuer` must be OIDC_ISSUER, §4.3), read on first use, so the gateway starts while its
 * issuer is down. The key set is jose's `createRemoteJWKSet`: cached, fetched again when older than
 * 10 minutes, or for an unknown `kid` once {@link REFETCH_COOLDOWN_MS} have passed since the last
 * fetch. When the issuer cannot be reached (discovery, or a key set needed and not fetched), the
 * caller gets 503 `Identity provider unavailable`, never a 401 that would tell a client its good
 * token is bad; the outage is logged once, and the issuer asked again after {@link RETRY_AFTER_FAILURE_MS}.
 */
export class IssuerKeys {
  readonly #issuer: URL;
  readonly #outage: OutageLog;
  #keySet: Promise<IssuerKeySet> | undefined;
  /** Epoch ms before which a failed issuer is not asked again. */
  #retryAt = 0;

  /** `checks` names what cannot be checked while the issuer is unreachable, for the outage's log line. */
  constructor(issuer: URL, logger: Logger, checks = 'bearer tokens') {
    this.#issuer = issuer;
    this.#outage = new OutageLog(logger.child({ issuer: issuer.href }), `identity provider unreachable: ${checks} cannot be checked`, 'identity provider reachable again');
  }

  /**
   * The issuer's identifier and key resolver, discovered on the first call.
   * @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE (503) when discovery fails, or failed less
   *   than {@link RETRY_AFTER_FAILURE_MS} ago.
   */
  async keySet(): Promise<IssuerKeySet> {
    if (this.#keySet === undefined) {
      this.#refuseWhileFailing();
      this.#keySet = this.#discover().catch((error: unknown) => {
        this.#keySet = undefined;
        throw this.#failed(error);
      });
    }
    return this.#keySet;
  }

  async #discover(): Promise<IssuerKeySet> {
    // OpenID Connect Discovery 1.0 §4: the issuer with any trailing `/` removed, then the well-known path.
    const url = `${this.#issuer.href.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    if (response.status !== 200) throw new Error(`discovery answered ${response.status}`);
    const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
    if (typeof metadata.issuer !== 'string' || new URL(metadata.issuer).href !== this.#issuer.href) {
      throw new Error(`discovery names another issuer: ${String(metadata.issuer)}`);
    }
    if (typeof metadata.jwks_uri !== 'string') throw new Error('discovery has no jwks_uri');
    const remote = createRemoteJWKSet(new URL(metadata.jwks_uri), {
      timeoutDuration: FETCH_TIMEOUT_MS,
      cooldownDuration: REFETCH_COOLDOWN_MS,
    });
    this.#outage.succeeded();
    const key: JWTVerifyGetKey = async (header, token) => {
      this.#refuseWhileFailing();
      try {
        const found = await remote(header, token);
        this.#outage.succeeded();
        return found;
      } catch (error) {
        if (error instanceof errors.JOSEError && TOKEN_KEY_ERRORS.has(error.code)) throw error;
        throw this.#failed(error);
      }
    };
    return { issuer: metadata.issuer, key };
  }

  /** @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE while a failure is recent. */
  #refuseWhileFailing(): void {
    if (Date.now() < this.#retryAt) throw new GatewayError('IDENTITY_PROVIDER_UNAVAILABLE');
  }

  /** Records a failure to reach the issuer; returns the error the caller answers with. */
  #failed(error: unknown): GatewayError {
    if (error instanceof GatewayError) return error;
    this.#retryAt = Date.now() + RETRY_AFTER_FAILURE_MS;
    this.#outage.failed(error);
    return new GatewayError('IDENTITY_PROVIDER_UNAVAILABLE');
  }
}
