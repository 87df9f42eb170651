import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import type { AssertionKeySet } from '../../shared/identity/assertion-key-set.js';
import { GatewayError } from '../../shared/errors.js';
import { ExpiringCache } from '../../shared/expiring-cache.js';
import type { SessionUser } from '../../shared/types.js';
import type { Route } from '../routing/route-table.js';

/** How long before its `exp` a cached assertion is replaced by a new one, in s (design.md §4.7). */
const REFRESH_BEFORE_EXPIRY_S = 60;

/** Cached assertions at most; past that, the oldest is forgotten first. */
const DEFAULT_MAX_CACHED = 10_000;

/** The claims of an assertion (design.md §4.7); `email` only when verified. */
export interface AssertionClaims {
  iss: string;
  aud: string;
  sub: string;
  email?: string;
  groups: string[];
  /** Epoch seconds. */
  iat: number;
  /** Epoch seconds: `iat` + ASSERTION_TTL. */
  exp: number;
}

/** A signed assertion and when it is to be replaced (epoch ms: `exp` less a minute). */
interface Signed {
  token: string;
  refreshAt: number;
}

/** The assertion a user object was last given, for which route and key. */
interface Remembered extends Signed {
  route: Route;
  /** The service host it was signed for (undefined: PUBLIC_URL's origin). */
  host: string | undefined;
  signer: Signer;
}

interface Signer {
  key: KeyObject;
  /** The JWS protected header, base64url-encoded, with its `.`: the same for every assertion of the key. */
  encodedHeader: string;
}

/**
 * The identity assertion of design.md §4.7: the `X-Gatehouse-Assertion` JWT (RFC 7519) that tells
 * an upstream who the caller is in a form it can verify against `/.well-known/jwks.json`. A JWS
 * in compact serialization (RFC 7515 §7.1) signed with ES256 (RFC 7518 §3.4: ECDSA P-256 SHA-256,
 * the signature as R || S), its header `{"alg":"ES256","typ":"JWT","kid":…}` (§4.1.4). Claims:
 * `iss` PUBLIC_URL's origin, `aud` the service's public URL (that origin plus the route's prefix,
 * `/` for the root service; for a service on hosts, the origin of the host the request named, on
 * PUBLIC_URL's scheme and port, so that an assertion for one app host is none for another: two
 * host services at `/` would otherwise share `PUBLIC_URL/`), the caller's `sub`, verified `email` (left out when there is none)
 * and `groups`, `iat`, and `exp` = `iat` + ASSERTION_TTL.
 *
 * Signing is synchronous (node:crypto, about a third of WebCrypto's cost through jose) and happens
 * once per caller and service while the assertion has more than a minute left (when ASSERTION_TTL
 * is longer than that): assertions are cached by audience and claims (a bearer-token caller has
 * no session to key on), at most `maxCached` of them, and all of them are forgotten when a new key
 * set arrives, so a rotation takes effect on the next request. The signing key is imported once
 * per key set. In front of that cache, each session's user object (the session cache hands out the
 * same one until it expires) remembers its last assertion, route and key: a session's next request
 * to the same service finds it without building the cache key (a JSON text of the claims, most of
 * the cached path's ~1 µs).
 */
export class IdentityAssertions {
  readonly #issuer: string;
  readonly #scheme: string;
  /** PUBLIC_URL's `:port`, or `''`: a service host's too. */
  readonly #port: string;
  readonly #ttlS: number;
  #signer: Signer | undefined;
  readonly #cache: ExpiringCache<Signed>;
  readonly #lastByUser = new WeakMap<SessionUser, Remembered>();

  /** `publicUrl`: PUBLIC_URL; `ttlMs`: ASSERTION_TTL (whole seconds). */
  constructor(publicUrl: URL, ttlMs: number, maxCached = DEFAULT_MAX_CACHED) {
    this.#issuer = publicUrl.origin;
    this.#scheme = publicUrl.protocol;
    this.#port = publicUrl.port === '' ? '' : `:${publicUrl.port}`;
    this.#ttlS = Math.floor(ttlMs / 1000);
    this.#cache = new ExpiringCache(maxCached);
  }

  /**
   * Signs with `keys.signing` from now on, and forgets every assertion signed before.
   * @throws when the key cannot be imported (the current one stays).
   */
  useKeys(keys: AssertionKeySet): void {
    const key = createPrivateKey({ key: { ...keys.signing }, format: 'jwk' });
    const header = { alg: 'ES256', typ: 'JWT', kid: keys.signing.kid };
    this.#signer = { key, encodedHeader: `${base64url(JSON.stringify(header))}.` };
    this.#cache.clear();
  }

  /**
   * The assertion for `user` calling `route`'s service, reached on the service host `host` (normal
   * form; undefined for a route of the host-less table); undefined before any key set has arrived,
   * for a public service, which is then forwarded without one (its upstream sees no verifiable
   * caller).
   * @throws {GatewayError} SERVICE_UNAVAILABLE (503) for a protected service before any key set
   *   has arrived: it is not forwarded without the assertion its upstream may rely on.
   */
  assertionFor(user: SessionUser, route: Route, host?: string): string | undefined {
    const signer = this.#signer;
    if (signer === undefined) {
      if (route.service.requireAuth) throw new GatewayError('SERVICE_UNAVAILABLE');
      return undefined;
    }
    const now = Date.now();
    const last = this.#lastByUser.get(user);
    if (last !== undefined && last.route === route && last.host === host && last.signer === signer && now < last.refreshAt) return last.token;
    const origin = host === undefined ? this.#issuer : `${this.#scheme}//${host}${this.#port}`;
    const aud = origin + (route.prefix === '' ? '/' : route.prefix);
    const groups = user.groups ?? [];
    const key = JSON.stringify([aud, user.sub, user.email, groups]);
    let signed = this.#cache.get(key, now);
    if (signed === undefined) {
      const iat = Math.floor(now / 1000);
      const claims: AssertionClaims = { iss: this.#issuer, aud, sub: user.sub, groups, iat, exp: iat + this.#ttlS };
      if (user.email !== '') claims.email = user.email;
      signed = { token: this.#sign(signer, claims), refreshAt: (claims.exp - REFRESH_BEFORE_EXPIRY_S) * 1000 };
      if (this.#ttlS <= REFRESH_BEFORE_EXPIRY_S) return signed.token;
      this.#cache.set(key, signed, signed.refreshAt);
    }
    this.#lastByUser.set(user, { ...signed, route, host, signer });
    return signed.token;
  }

  /** The compact JWS of `claims` (RFC 7515 §7.1), ES256 with R || S (RFC 7518 §3.4). */
  #sign(signer: Signer, claims: AssertionClaims): string {
    const signingInput = signer.encodedHeader + base64url(JSON.stringify(claims));
    const signature = sign('sha256', Buffer.from(signingInput), { key: signer.key, dsaEncoding: 'ieee-p1363' });
    return `${signingInput}.${signature.toString('base64url')}`;
  }
}

/** base64url without padding (RFC 7515 §2) of a string's UTF-8 bytes. */
function base64url(text: string): string {
  return Buffer.from(text).toString('base64url');
}
