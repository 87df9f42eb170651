import acme from 'acme-client';
import type { ChallengeBoard } from './challenge-board.js';

/** The challenge types the gateway answers: HTTP-01 (RFC 8555 §8.3) and TLS-ALPN-01 (RFC 8737). */
export type ChallengeType = 'http-01' | 'tls-alpn-01';

/** What an order yields: the chain (leaf first) and its new key, PEM. */
export interface OrderedCertificate {
  certPem: string;
  keyPem: string;
}

/**
 * Orders a certificate for `host` (RFC 8555 §7.4) with a new EC P-256 key: a new order (naming the
 * certificate it `replaces` when given, RFC 9773 §5: acme-client sends an order's fields as they
 * are), each pending authorization proven with the first of `preferred` the CA offers (put up on
 * `board` before the CA is asked to validate, §7.5.1, taken down after), the order finalized with
 * a CSR naming the host, and the certificate downloaded.
 * @throws the CA's problem (RFC 8555 §6.7: an invalid challenge says why), a network error, or
 *   the bus's when a challenge cannot be put up.
 */
export async function orderCertificate(client: acme.Client, host: string, board: ChallengeBoard, preferred: readonly ChallengeType[], replaces?: string): Promise<OrderedCertificate> {
  const [key, csr] = await acme.crypto.createCsr({ commonName: host, altNames: [host] }, await acme.crypto.createPrivateEcdsaKey('P-256'));
  const request: Parameters<acme.Client['createOrder']>[0] & { replaces?: string } = { identifiers: [{ type: 'dns', value: host }], ...(replaces !== undefined && { replaces }) };
  const order = await client.createOrder(request);
  for (const authorization of await client.getAuthorizations(order)) {
    if (authorization.status !== 'valid') await proveControl(client, authorization, board, preferred);
  }
  const finalized = await client.finalizeOrder(order, csr);
  return { certPem: await client.getCertificate(finalized), keyPem: key.toString() };
}

/** Answers one authorization's challenge and waits until the CA has validated it (or says why not). */
async function proveControl(client: acme.Client, authorization: acme.Authorization, board: ChallengeBoard, preferred: readonly ChallengeType[]): Promise<void> {
  const host = authorization.identifier.value;
  const challenge = preferred.map((type) => authorization.challenges.find((offered) => offered.type === type)).find((offered) => offered !== undefined);
  if (challenge === undefined) throw new Error(`the CA offers none of ${preferred.join(', ')} for ${host}`);
  const keyAuthorization = await client.getChallengeKeyAuthorization(challenge);
  const takeDown = challenge.type === 'http-01'
    ? await board.putHttp01(challenge.token, keyAuthorization)
    : await board.putTlsAlpn01(host, await alpnCertificate(authorization, keyAuthorization));
  try {
    await client.completeChallenge(challenge);
    await client.waitForValidStatus(challenge);
  } finally {
    await takeDown();
  }
}

/** The TLS-ALPN-01 challenge certificate (RFC 8737 §3: the acmeIdentifier extension holds the key authorization's SHA-256), with a throwaway EC key. */
async function alpnCertificate(authorization: acme.Authorization, keyAuthorization: string): Promise<{ cert: string; key: string }> {
  const [key, cert] = await acme.crypto.createAlpnCertificate(authorization, keyAuthorization, await acme.crypto.createPrivateEcdsaKey('P-256'));
  return { cert: cert.toString(), key: key.toString() };
}
