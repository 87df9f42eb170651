import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';

/**
 * Mozilla's "intermediate" configuration for TLS 1.2 (https://ssl-config.mozilla.org/, guidelines
 * v5.7): ECDHE and DHE key exchange with AEAD ciphers only. TLS 1.3's suites are OpenSSL's
 * defaults, which that configuration keeps. DHE suites need DH parameters, which we do not set,
 * so they are never chosen (the ECDHE ones serve every client of that profile).
 */
export const INTERMEDIATE_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
  'DHE-RSA-AES128-GCM-SHA256',
  'DHE-RSA-AES256-GCM-SHA384',
  'DHE-RSA-CHACHA20-POLY1305',
].join(':');

/**
 * What every secure context of the gateway's listeners carries: TLS 1.2 and 1.3 only (RFC 8446;
 * 1.0 and 1.1 are deprecated by RFC 8996), the intermediate ciphers, and the client's preference
 * among them (`honorCipherOrder: false`, as the intermediate profile says: every suite offered is
 * strong, and a client without AES hardware prefers ChaCha20).
 */
export const TLS_POLICY: SecureContextOptions = {
  minVersion: 'TLSv1.2',
  ciphers: INTERMEDIATE_CIPHERS,
  honorCipherOrder: false,
};

/** A certificate chain and its private key, PEM as read from disk or handed over (an ACME order). */
export interface CertificatePair {
  cert: Buffer;
  key: Buffer;
}

/**
 * The secure context serving `pair` under {@link TLS_POLICY}.
 * @throws when the PEM cannot be parsed or the key does not match the certificate (OpenSSL's
 * message, e.g. `key values mismatch`).
 */
export function secureContextOf(pair: CertificatePair): SecureContext {
  return createSecureContext({ ...TLS_POLICY, cert: pair.cert, key: pair.key });
}
