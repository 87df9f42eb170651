import type { Span } from '@opentelemetry/api';
import * as client from 'openid-client';
import type { Config } from '../../shared/config/config.js';
import { errorCode } from '../../shared/error-code.js';
import { GatewayError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { SpanExport } from '../../shared/tracing/span-export.js';
import { signInOf, type StepUpRequest } from '../../shared/identity/step-up.js';
import type { SessionUser } from '../../shared/types.js';
import { tracedFetch } from '../tracing/traced-fetch.js';
import { withFetch, type ConfigurationSetup } from './configuration-copy.js';
import type { LoginTransaction } from './login-transactions.js';

/** Discovery and token requests give up after this long, in seconds (openid-client's unit). */
const IDP_TIMEOUT_SECONDS = 10;

/** What a started login needs: where to send the browser, and the secrets to keep for the callback. */
export interface StartedLogin {
  authorizationUrl: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** How and when the user signed in, from an ID token alone (step-up.ts `signInOf`): never from userinfo. */
export type SignIn = Pick<SessionUser, 'authTime' | 'acr' | 'amr'>;

/** A completed login: the ID token (kept for logout), the user's claims, and the refresh token when the provider issued one. */
export interface CompletedLogin {
  idToken: string;
  claims: Record<string, unknown>;
  /** The ID token's `auth_time`, `acr`, `amr` (design.md §4.18). */
  signIn: SignIn;
  /** Secret: kept only sealed (shared/identity/token-encryption.ts), never logged. */
  refreshToken?: string;
}

/** A refresh at the token endpoint (RFC 6749 §6): the user's current claims, and the new tokens the provider issued. */
export interface RefreshedGrant {
  claims: Record<string, unknown>;
  /** Absent when the provider returned no new ID token. */
  idToken?: string;
  /** The new ID token's `auth_time`, `acr`, `amr`; absent with it (userinfo never says how the user signed in). */
  signIn?: SignIn;
  /** Absent when the provider keeps the refresh token (no rotation). */
  refreshToken?: string;
}

/** The provider refused the refresh token (`invalid_grant`, RFC 6749 §5.2): the grant is over. */
export class GrantRevoked extends Error {}

/** The provider could not answer a refresh (unreachable, 5xx, timeout, any error but `invalid_grant`). */
export class ProviderUnavailable extends Error {}

/**
 * The gateway as an OpenID Connect relying party (openid-client 6): discovery (OIDC Discovery 1.0),
 * the authorization code flow with PKCE S256 (RFC 7636), `state` and `nonce` (OIDC Core 1.0
 * §3.1.2.1), `response_mode=form_post` when the issuer lists it (OAuth 2.0 Form Post Response
 * Mode), else `query`. The ID token's signature is checked against the issuer's JWKS
 * (`enableNonRepudiationChecks`), together with `iss`, `aud`, `exp`, `iat` and `nonce`
 * (OIDC Core 1.0 §3.1.3.7). Discovery runs on first use and again after a failure, so the gateway
 * starts while its issuer is down. A call given a span (a sampled request's, a refresh's) records
 * each of its requests to the provider as a client span under it (design.md §3.10).
 */
export class RelyingParty {
  readonly #config: Config;
  readonly #logger: Logger;
  readonly #spanExport: SpanExport | undefined;
  #discovery: Promise<client.Configuration> | undefined;

  /** `spanExport`: the process's, while tracing is on. */
  constructor(config: Config, logger: Logger, spanExport: SpanExport | undefined) {
    this.#config = config;
    this.#logger = logger;
    this.#spanExport = spanExport;
  }

  /** The issuer's host, for pages ("Sign in with …"); null when none is configured. */
  get issuerHost(): string | null {
    return this.#config.oidc.issuer?.host ?? null;
  }

  /**
   * Builds the authorization request whose response comes back to `redirectUri` (the callback of
   * the origin the login started on: PUBLIC_URL's or ADMIN_URL's). A step-up (`stepUp`, design.md
   * §4.18) asks `max_age` and `acr_values` (OIDC Core 1.0 §3.1.2.1), and `prompt=login` for a
   * `maxAge` of 0 (a new authentication, whatever the provider's session).
   * @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE (503) when discovery fails.
   */
  async startLogin(redirectUri: string, stepUp: StepUpRequest = {}): Promise<StartedLogin> {
    const configuration = await this.#configuration();
    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const formPost = configuration.serverMetadata().response_modes_supported?.includes('form_post') ?? false;
    const authorizationUrl = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.#config.oidc.scopes,
      response_type: 'code',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
      ...(formPost ? { response_mode: 'form_post' } : {}),
      ...(stepUp.maxAge === undefined ? {} : { max_age: String(stepUp.maxAge) }),
      ...(stepUp.maxAge === 0 ? { prompt: 'login' } : {}),
      ...(stepUp.acr === undefined ? {} : { acr_values: stepUp.acr.join(' ') }),
    });
    return { authorizationUrl, state, nonce, codeVerifier };
  }

  /**
   * Redeems the authorization response for tokens and verifies the ID token. When the ID token
   * lacks `email`, `email_verified`, `name` or the groups claim (OIDC_GROUPS_CLAIM, design.md §4.7)
   * and the issuer has a userinfo endpoint, the missing ones are read from it (OIDC Core 1.0 §5.3;
   * its `sub` must match).
   * @param params the callback's parameters (form body for form_post, query otherwise).
   * @param span the request's span while sampled: the token, JWKS and userinfo requests become its children.
   * @throws openid-client errors on any failed check (state, issuer, signature, claims, token request).
   */
  async completeLogin(params: URLSearchParams, method: 'GET' | 'POST', transaction: LoginTransaction, span?: Span): Promise<CompletedLogin> {
    const response =
      method === 'POST'
        ? new Request(transaction.redirectUri, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: params.toString(),
          })
        : new URL(`${transaction.redirectUri}?${params.toString()}`);
    return this.#call(span, async (configuration) => {
      const tokens = await client.authorizationCodeGrant(configuration, response, {
        pkceCodeVerifier: transaction.codeVerifier,
        expectedState: transaction.state,
        expectedNonce: transaction.nonce,
        idTokenExpected: true,
      });
      const idClaims = tokens.claims()!;
      const claims = await this.#completeClaims(configuration, { ...idClaims }, tokens.access_token);
      return { idToken: tokens.id_token!, claims, signIn: signInOf(idClaims), ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}) };
    });
  }

  /**
   * Redeems a refresh token (RFC 6749 §6; OIDC Core 1.0 §12) for the user's current claims: the
   * new ID token's (checked as at sign-in, but for the nonce), completed from userinfo as in
   * {@link completeLogin}, or userinfo's alone when no ID token comes back. The subject must be
   * `sub` (OIDC Core 1.0 §12.2). Tried whatever `grant_types_supported` lists.
   * @param span the refresh's span while sampled: its requests to the provider become its children.
   * @throws {GrantRevoked} when the provider answers `invalid_grant` (or names another subject).
   * @throws {ProviderUnavailable} on anything else: unreachable, 5xx, timeout, another error code.
   */
  async refresh(refreshToken: string, sub: string, span?: Span): Promise<RefreshedGrant> {
    try {
      return await this.#call(span, (configuration) => this.#refreshed(configuration, refreshToken, sub));
    } catch (error) {
      if (error instanceof GrantRevoked) throw error;
      throw isInvalidGrant(error) ? new GrantRevoked('the provider refused the refresh token (invalid_grant)') : unavailable(error);
    }
  }

  async #refreshed(configuration: client.Configuration, refreshToken: string, sub: string): Promise<RefreshedGrant> {
    const tokens = await client.refreshTokenGrant(configuration, refreshToken);
    const idClaims = tokens.claims();
    if (idClaims !== undefined && idClaims.sub !== sub) throw new GrantRevoked('the refreshed ID token names another subject');
    const claims = await this.#completeClaims(configuration, { ...(idClaims ?? { sub }) }, tokens.access_token);
    const idToken = tokens.id_token && idClaims ? { idToken: tokens.id_token, signIn: signInOf(idClaims) } : {};
    return { claims, ...idToken, ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}) };
  }

  /**
   * `use` with the discovered configuration; given `span` (and tracing on), with a copy of it
   * whose requests are client spans under `span` (configuration-copy.ts).
   * @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE when discovery fails; what `use` throws.
   */
  async #call<T>(span: Span | undefined, use: (configuration: client.Configuration) => Promise<T>): Promise<T> {
    const shared = await this.#configuration();
    if (span === undefined || this.#spanExport === undefined) return use(shared);
    return withFetch(shared, this.#setup(), tracedFetch(this.#spanExport, span), use);
  }

  /**
   * Revokes a refresh token at the provider (OAuth 2.0 Token Revocation, RFC 7009 §2.1), so a grant
   * the gateway no longer needs (its session ended) cannot be used by anyone. Does nothing when the
   * provider lists no `revocation_endpoint`.
   * @throws openid-client errors when the provider cannot be reached or refuses (the caller logs them).
   */
  async revokeRefreshToken(refreshToken: string): Promise<void> {
    const configuration = await this.#configuration();
    if (!configuration.serverMetadata().revocation_endpoint) return;
    await client.tokenRevocation(configuration, refreshToken, { token_type_hint: 'refresh_token' });
  }

  /**
   * Fills in `email`, `email_verified`, `name` and the groups claim from userinfo when the ID token
   * lacks any of them and the issuer has a userinfo endpoint (OIDC Core 1.0 §5.3; its `sub` must match).
   */
  async #completeClaims(configuration: client.Configuration, claims: Record<string, unknown>, accessToken: string): Promise<Record<string, unknown>> {
    const incomplete = !claims.email || claims.email_verified === undefined || !claims.name || claims[this.#config.oidc.groupsClaim] === undefined;
    if (incomplete && configuration.serverMetadata().userinfo_endpoint) {
      const userinfo = await client.fetchUserInfo(configuration, accessToken, String(claims.sub));
      for (const [key, value] of Object.entries(userinfo)) claims[key] ??= value;
    }
    return claims;
  }

  /**
   * Where to send the browser at logout: the issuer's `end_session_endpoint` with `id_token_hint`
   * and `post_logout_redirect_uri` = `returnTo` (the signed-out origin's `/`; OIDC RP-Initiated
   * Logout 1.0 §2), or null when it has none or cannot be reached.
   */
  async endSessionUrl(idToken: string | null, returnTo: string): Promise<string | null> {
    try {
      const configuration = await this.#configuration();
      if (!configuration.serverMetadata().end_session_endpoint) return null;
      return client.buildEndSessionUrl(configuration, {
        post_logout_redirect_uri: returnTo,
        ...(idToken ? { id_token_hint: idToken } : {}),
      }).href;
    } catch {
      return null;
    }
  }

  #configuration(): Promise<client.Configuration> {
    this.#discovery ??= this.#discover().catch((error: unknown) => {
      this.#discovery = undefined;
      this.#logger.error({ err: error, issuer: this.#config.oidc.issuer?.href }, 'OpenID Provider discovery failed');
      throw new GatewayError('IDENTITY_PROVIDER_UNAVAILABLE');
    });
    return this.#discovery;
  }

  async #discover(): Promise<client.Configuration> {
    const { clientId, clientAuthentication, execute, timeout } = this.#setup();
    return client.discovery(this.#config.oidc.issuer!, clientId, undefined, clientAuthentication, { execute, timeout });
  }

  /**
   * The client and the checks every configuration gets (discovery's, and a traced call's copy).
   * @throws when OIDC_ISSUER or OIDC_CLIENT_ID is unset.
   */
  #setup(): ConfigurationSetup {
    const { issuer, clientId, clientSecret } = this.#config.oidc;
    if (!issuer || !clientId) throw new Error('OIDC_ISSUER and OIDC_CLIENT_ID are not set');
    const execute = [client.enableNonRepudiationChecks];
    if (issuer.protocol === 'http:') execute.push(client.allowInsecureRequests);
    const clientAuthentication = clientSecret ? client.ClientSecretBasic(clientSecret) : client.None();
    return { clientId, clientAuthentication, execute, timeout: IDP_TIMEOUT_SECONDS };
  }
}

/** Whether a refresh failed because the provider refused the grant (RFC 6749 §5.2 `invalid_grant`). */
function isInvalidGrant(error: unknown): boolean {
  return error instanceof client.ResponseBodyError && error.error === 'invalid_grant';
}

/** A refresh failure that says the provider could not answer; its message names the kind, never a token. */
function unavailable(error: unknown): ProviderUnavailable {
  const code = error instanceof client.ResponseBodyError ? error.error : errorCode(error);
  return new ProviderUnavailable(`the provider could not refresh the session (${code ?? (error as Error)?.name ?? 'error'})`, { cause: error });
}
