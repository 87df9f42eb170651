import { compactVerify, decodeProtectedHeader, errors, type JWTVerifyGetKey, type ProtectedHeaderParameters } from 'jose';

/**
 * Signature algorithms a logout token may use: asymmetric ones only (RFC 7518 §3.3–3.5, RFC 8037,
 * RFC 9864 `Ed25519`), as for bearer tokens (proxy/auth/bearer-token.ts), so neither `none` (§2.6 forbids
 * it) nor an HMAC keyed with the issuer's public key (algorithm confusion) passes.
 */
const ALGORITHMS: readonly string[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/**
 * `typ` header values accepted once `application/` is dropped and case folded (RFC 7515 §4.1.9).
 * `logout+jwt` is the explicit type §2.4 recommends. `jwt` is kept because providers written before
 * the final spec label logout tokens so; what tells such a token from an ID token (the confusion
 * explicit typing guards against) is §2.6's own rules: the back-channel event in `events`, which no
 * ID token carries, and no `nonce`, which every ID token issued to the gateway carries (it sends
 * one with every authorization request, OIDC Core 1.0 §3.1.2.1). Any other type (`at+jwt` of an
 * RFC 9068 access token, `secevent+jwt` of another event) names a different token and is refused.
 */
const ACCEPTED_TYPES: ReadonlySet<string> = new Set(['logout+jwt', 'jwt']);

/** The `events` member that makes a JWT a logout token (§2.4). */
const LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Default clock skew allowed on `iat`, `exp` and `nbf`, in seconds: the provider's clock and the
 * gateway's are different machines', and a minute covers ordinary drift without widening much.
 */
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 60;

/**
 * Default age past which a token's `iat` is refused, in seconds (§2.6 validates `iat` as for ID
 * tokens, where OIDC Core 1.0 §3.1.3.7 step 10 lets the client refuse tokens issued too far
 * in the past). A provider posts the logout token as it issues it, and the spec recommends a
 * lifetime of about two minutes; five minutes leaves room for a provider's queue or retries, while
 * bounding how long each `jti` must be remembered (to 6 minutes with the default skew) and how long
 * a captured token can be replayed if the replay store is lost.
 */
const DEFAULT_MAX_AGE_SECONDS = 300;

/**
 * JOSE failures that are the token's fault; any other error (the issuer's keys could not be
 * fetched, e.g. IssuerKeys' 503) is passed on, so the caller does not answer 400 to a good token.
 */
const TOKEN_FAULTS: ReadonlyMap<string, string> = new Map([
  [errors.JWSSignatureVerificationFailed.code, 'the signature does not verify with the issuer keys'],
  [errors.JWKSNoMatchingKey.code, 'no issuer key matches its kid and alg'],
  [errors.JWKSMultipleMatchingKeys.code, 'more than one issuer key matches its kid and alg'],
  [errors.JOSEAlgNotAllowed.code, 'alg is not an allowed asymmetric algorithm'],
  [errors.JOSENotSupported.code, 'its algorithm or key is not supported'],
  [errors.JWSInvalid.code, 'not a well-formed JWS'],
]);

/**
 * What a valid logout token says: end the provider session `sid` (and only that one, when `sub` is
 * given too), or with only `sub`, every session of that user (§2.4). At least one of the two is set.
 */
export interface LogoutRequest {
  /** The user's subject identifier at the issuer. */
  sub?: string;
  /** The provider's session id, as in the ID token's `sid` (OpenID Connect Front-Channel Logout 1.0 §3). */
  sid?: string;
  /** The token's unique id, for the caller's replay check (§2.6: another token with the same `jti` recently received). */
  jti: string;
  /**
   * Epoch seconds until which the jti must be remembered: this call accepts the token only strictly
   * before this instant (its `exp` or `iat` + max age, whichever is earlier, plus the clock
   * tolerance), so a store that forgets the jti at this instant never lets a replay through.
   */
  rememberUntil: number;
}

/**
 * A logout token that fails a check of §2.6; the caller answers 400 (§2.8). The message names the
 * failed check (`logout token: aud does not contain the client id`) and never quotes the token.
 */
export class InvalidLogoutToken extends Error {
  constructor(reason: string) {
    super(`logout token: ${reason}`);
    this.name = 'InvalidLogoutToken';
  }
}

/** What a logout token is checked against. */
export interface LogoutTokenCheck {
  /** The issuer's identifier, exactly as its tokens' `iss`. */
  issuer: string;
  /** The gateway's client id, which `aud` must contain. */
  clientId: string;
  /** The issuer's signing keys: jose's `createRemoteJWKSet(...)`, `createLocalJWKSet(...)` or IssuerKeys' `key`. */
  keys: JWTVerifyGetKey;
  /** Allowed clock skew on `iat`, `exp` and `nbf`, in seconds; default 60. */
  clockToleranceSeconds?: number;
  /** How old an `iat` may be, in seconds (beyond the tolerance); default 300. */
  maxAgeSeconds?: number;
  /** The current time, epoch ms (for tests); default `Date.now`. */
  now?: () => number;
}

/**
 * Validates a logout token as OpenID Connect Back-Channel Logout 1.0 §2.6 asks (all but the
 * optional `jti` replay check, which is the caller's, with {@link LogoutRequest.rememberUntil}): a signed,
 * unencrypted JWT with an asymmetric `alg`, a `typ` (when present) of `logout+jwt` or `JWT`, a
 * signature by one of the issuer's keys; `iss` = the issuer, `aud` containing the client id, `iat`
 * neither in the future nor older than the max age, `exp` present and not passed, `nbf` (when
 * present) holding, all within the clock tolerance; `sub` and/or `sid`; the back-channel logout event in `events`; no
 * `nonce`; a `jti` (§2.4).
 * @param token the `logout_token` form parameter as posted (§2.5).
 * @throws {InvalidLogoutToken} when any check fails (the caller answers 400, §2.8).
 * @throws whatever `check.keys` throws when the issuer's keys cannot be fetched (e.g. GatewayError
 *   IDENTITY_PROVIDER_UNAVAILABLE from IssuerKeys), so the caller answers 5xx, not 400.
 */
export async function verifyLogoutToken(token: string, check: LogoutTokenCheck): Promise<LogoutRequest> {
  checkHeader(token);
  const claims = await verifiedClaims(token, check.keys);
  if (claims.iss !== check.issuer) throw new InvalidLogoutToken('iss is not the issuer');
  if (!audienceContains(claims.aud, check.clientId)) throw new InvalidLogoutToken('aud does not contain the client id');
  const rememberUntil = checkTimes(claims, check);
  const { sub, sid } = subjectAndSession(claims);
  checkEvent(claims);
  // §2.4: forbidden so that an ID token (which carries the gateway's nonce) is never a logout token.
  if (Object.hasOwn(claims, 'nonce')) throw new InvalidLogoutToken('nonce is present');
  if (!isNonEmptyString(claims.jti)) throw new InvalidLogoutToken('jti is missing');
  return { ...(sub === undefined ? {} : { sub }), ...(sid === undefined ? {} : { sid }), jti: claims.jti, rememberUntil };
}

/**
 * The checks on the unverified header, before any key is fetched: a compact JWS (§2.6: the
 * gateway registers no encryption key, so an encrypted token cannot be read), an allowed `alg`
 * (§2.6), an accepted `typ`, and no `crit` (no extension is understood, RFC 7515 §4.1.11; it also
 * keeps out `b64: false`, RFC 7797, which a JWT must not use).
 */
function checkHeader(token: string): void {
  const parts = typeof token === 'string' ? token.split('.').length : 0;
  if (parts === 5) throw new InvalidLogoutToken('it is encrypted (JWE), which is not accepted');
  if (parts !== 3) throw new InvalidLogoutToken('not a compact JWS');
  let header: ProtectedHeaderParameters;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw new InvalidLogoutToken('the header is not base64url JSON');
  }
  if (header.alg === 'none') throw new InvalidLogoutToken('alg none is refused');
  if (typeof header.alg !== 'string' || !ALGORITHMS.includes(header.alg)) throw new InvalidLogoutToken('alg is not an allowed asymmetric algorithm');
  if (header.typ !== undefined && !(typeof header.typ === 'string' && ACCEPTED_TYPES.has(header.typ.toLowerCase().replace(/^application\//, '')))) {
    throw new InvalidLogoutToken('typ is neither logout+jwt nor JWT');
  }
  if (header.crit !== undefined) throw new InvalidLogoutToken('crit extensions are not supported');
}

/**
 * The claims of `token` once its signature verifies with one of the issuer's keys (§2.6).
 * jose checks the signature only; the claims are checked here, so each failure names its rule.
 */
async function verifiedClaims(token: string, keys: JWTVerifyGetKey): Promise<Record<string, unknown>> {
  let payload: Uint8Array;
  try {
    ({ payload } = await compactVerify(token, keys, { algorithms: [...ALGORITHMS] }));
  } catch (error) {
    const reason = error instanceof errors.JOSEError ? TOKEN_FAULTS.get(error.code) : undefined;
    if (reason === undefined) throw error;
    throw new InvalidLogoutToken(reason);
  }
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(payload));
  } catch {
    throw new InvalidLogoutToken('the claims are not JSON');
  }
  if (!isObject(claims)) throw new InvalidLogoutToken('the claims are not a JSON object');
  return claims;
}

/**
 * Checks `iat` (present, not in the future, not older than the max age), `exp` (present, §2.4, not
 * passed) and `nbf` (when present) against the clock, with the tolerance (§2.6; RFC 7519 §4.1.4–4.1.6). Times are
 * compared to the ms, and every bound refuses at its instant, so the returned epoch second (rounded
 * up) is one before which all accepted tokens fall.
 * @returns {@link LogoutRequest.rememberUntil}, epoch seconds.
 */
function checkTimes(claims: Record<string, unknown>, check: LogoutTokenCheck): number {
  const tolerance = check.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  const maxAge = check.maxAgeSeconds ?? DEFAULT_MAX_AGE_SECONDS;
  const now = (check.now ?? Date.now)() / 1000;
  const iat = numericDate(claims, 'iat');
  const exp = numericDate(claims, 'exp');
  const nbf = numericDate(claims, 'nbf');
  if (iat === undefined) throw new InvalidLogoutToken('iat is missing');
  // §2.4 lists exp among the REQUIRED claims: a token without one would be good for ever but for our max age.
  if (exp === undefined) throw new InvalidLogoutToken('exp is missing');
  if (iat > now + tolerance) throw new InvalidLogoutToken('iat is in the future');
  if (now >= iat + maxAge + tolerance) throw new InvalidLogoutToken('iat is too old');
  if (now >= exp + tolerance) throw new InvalidLogoutToken('exp has passed');
  if (nbf !== undefined && nbf > now + tolerance) throw new InvalidLogoutToken('nbf is in the future');
  return Math.ceil(Math.min(iat + maxAge, exp) + tolerance);
}

/**
 * The NumericDate claim `name` (RFC 7519 §2: epoch seconds, a finite number), undefined when absent.
 * @throws {InvalidLogoutToken} when it is present and not a number.
 */
function numericDate(claims: Record<string, unknown>, name: 'iat' | 'exp' | 'nbf'): number | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new InvalidLogoutToken(`${name} is not a number`);
  return value;
}

/** Whether `aud` (a string or an array of them, RFC 7519 §4.1.3) contains `clientId`. */
function audienceContains(aud: unknown, clientId: string): boolean {
  return aud === clientId || (Array.isArray(aud) && aud.includes(clientId));
}

/** `sub` and `sid`, each a non-empty string when present, at least one present (§2.4, §2.6). */
function subjectAndSession(claims: Record<string, unknown>): { sub: string | undefined; sid: string | undefined } {
  const sub = optionalString(claims, 'sub');
  const sid = optionalString(claims, 'sid');
  if (sub === undefined && sid === undefined) throw new InvalidLogoutToken('neither sub nor sid is present');
  return { sub, sid };
}

/**
 * The string claim `name`, undefined when absent.
 * @throws {InvalidLogoutToken} when it is present and not a non-empty string.
 */
function optionalString(claims: Record<string, unknown>, name: 'sub' | 'sid'): string | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (!isNonEmptyString(value)) throw new InvalidLogoutToken(`${name} is not a non-empty string`);
  return value;
}

/** `events` holds the back-channel logout event, whose value is a JSON object (§2.4, §2.6). */
function checkEvent(claims: Record<string, unknown>): void {
  const { events } = claims;
  if (!isObject(events) || !Object.hasOwn(events, LOGOUT_EVENT)) throw new InvalidLogoutToken('events does not hold the back-channel logout event');
  if (!isObject(events[LOGOUT_EVENT])) throw new InvalidLogoutToken('the back-channel logout event is not a JSON object');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
