import * as v from 'valibot';

/**
 * The keys of the identity assertion (design.md §4.7), as the admin plane hands them to the data
 * planes over the event bus. ES256 only: EC P-256 keys as JWKs (RFC 7517 §4, RFC 7518 §6.2).
 */

/** A public key as `/.well-known/jwks.json` publishes it; `kid` is its JWK thumbprint (RFC 7638). */
export interface PublicAssertionKey {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: 'ES256';
  use: 'sig';
}

/** The signing key: a {@link PublicAssertionKey} with its private part `d` (RFC 7518 §6.2.2.1). Secret: never logged. */
export interface SigningAssertionKey extends PublicAssertionKey {
  d: string;
}

/** What a data plane needs: the key it signs with, and the public keys it publishes. */
export interface AssertionKeySet {
  signing: SigningAssertionKey;
  /**
   * The public keys verifiers may meet, newest first: the signing key's, then those of retired
   * keys whose assertions may still be alive (design.md §4.7).
   */
  published: PublicAssertionKey[];
}

const publicKey = v.object({
  kty: v.literal('EC'),
  crv: v.literal('P-256'),
  x: v.string(),
  y: v.string(),
  kid: v.pipe(v.string(), v.minLength(1)),
  alg: v.literal('ES256'),
  use: v.literal('sig'),
});

const keySet = v.object({
  signing: v.object({ ...publicKey.entries, d: v.string() }),
  published: v.pipe(v.array(publicKey), v.minLength(1)),
});

/** True when `value` (parsed JSON from another process) has the shape of an {@link AssertionKeySet}. */
export function isAssertionKeySet(value: unknown): value is AssertionKeySet {
  return v.is(keySet, value);
}
