import * as client from 'openid-client';
import type { Config } from '../../shared/config.js';
import { GatewayError } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
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

/** A completed login: the ID token (kept for logout) and the user's claims. */
export interface CompletedLogin {
  idToken: string;
  claims: Record<string, unknown>;
}

/**
 * The gateway as an OpenID Connect relying party (openid-client 6): discovery (OIDC Discovery 1.0),
 * the authorization code flow with PKCE S256 (RFC 7636), `state` and `nonce` (OIDC Core 1.0
 * §3.1.2.1), `response_mode=form_post` when the issuer lists it (OAuth 2.0 Form Post Response
 * Mode), else `query`. The ID token's signature is checked against the issuer's JWKS
 * (`enableNonRepudiationChecks`), together with `iss`, `aud`, `exp`, `iat` and `nonce`
 * (OIDC Core 1.0 §3.1.3.7). Discovery runs on first use and again after a failure, so the gateway
 * starts while its issuer is down.
 */
export class RelyingParty {
  readonly #config: Config;
  readonly #logger: Logger;
  #discovery: Promise<client.Configuration> | undefined;

  constructor(config: Config, logger: Logger) {
    this.#config = config;
    this.#logger = logger;
  }

  /** The issuer's host, for pages ("Sign in with …"); null when none is configured. */
  get issuerHost(): string | null {
    return this.#config.oidc.issuer?.host ?? null;
  }

  /**
   * Builds the authorization request whose response comes back to `redirectUri` (the callback of
   * the origin the login started on: PUBLIC_URL's or ADMIN_URL's).
   * @throws {GatewayError} IDENTITY_PROVIDER_UNAVAILABLE (503) when discovery fails.
   */
  async startLogin(redirectUri: string): Promise<StartedLogin> {
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
    });
    return { authorizationUrl, state, nonce, codeVerifier };
  }

  /**
   * Redeems the authorization response for tokens and verifies the ID token. When the ID token
   * lacks `email`, `email_verified`, `name` or the groups claim (OIDC_GROUPS_CLAIM, design.md §4.7)
   * and the issuer has a userinfo endpoint, the missing ones are read from it (OIDC Core 1.0 §5.3;
   * its `sub` must match).
   * @param params the callback's parameters (form body for form_post, query otherwise).
   * @throws openid-client errors on any failed check (state, issuer, signature, claims, token request).
   */
  async completeLogin(params: URLSearchParams, method: 'GET' | 'POST', transaction: LoginTransaction): Promise<CompletedLogin> {
    const configuration = await this.#configuration();
    const response =
      method === 'POST'
        ? new Request(transaction.redirectUri, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: params.toString(),
          })
        : new URL(`${transaction.redirectUri}?${params.toString()}`);
    const tokens = await client.authorizationCodeGrant(configuration, response, {
      pkceCodeVerifier: transaction.codeVerifier,
      expectedState: transaction.state,
      expectedNonce: transaction.nonce,
      idTokenExpected: true,
    });
    const claims: Record<string, unknown> = { ...tokens.claims()! };
    const incomplete = !claims.email || claims.email_verified === undefined || !claims.name || claims[this.#config.oidc.groupsClaim] === undefined;
    if (incomplete && configuration.serverMetadata().userinfo_endpoint) {
      const userinfo = await client.fetchUserInfo(configuration, tokens.access_token, String(claims.sub));
      for (const [key, value] of Object.entries(userinfo)) claims[key] ??= value;
    }
    return { idToken: tokens.id_token!, claims };
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
    const { issuer, clientId, clientSecret } = this.#config.oidc;
    if (!issuer || !clientId) throw new Error('OIDC_ISSUER and OIDC_CLIENT_ID are not set');
    const execute = [client.enableNonRepudiationChecks];
    if (issuer.protocol === 'http:') execute.push(client.allowInsecureRequests);
    return client.discovery(
      issuer,
      clientId,
      undefined,
      clientSecret ? client.ClientSecretBasic(clientSecret) : client.None(),
      { execute, timeout: IDP_TIMEOUT_SECONDS },
    );
  }
}
