import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { CertificatePair } from './tls-policy.js';

/** How long a stand-in certificate is valid, in ms: it is replaced as soon as ACME's arrives, and made anew at each start. */
const VALIDITY_MS = 7 * 24 * 3600_000;

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

x509.cryptoProvider.set(webcrypto);

/**
 * A self-signed certificate for `host` (EC P-256, its subjectAltName the host, RFC 5280
 * §4.2.1.6), served until ACME's first certificate for it arrives (design.md §4.15): no client
 * trusts it, but the listener answers the name instead of failing the handshake, and the CA's
 * TLS-ALPN-01 handshakes do not need it. Its key never leaves this process.
 * @returns the certificate and its key, PEM.
 */
export async function selfSignedCertificate(host: string): Promise<CertificatePair> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const now = Date.now();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: Buffer.from(webcrypto.getRandomValues(new Uint8Array(16))).toString('hex').replace(/^[89a-f]/, '7'),
    name: `CN=${host}`,
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + VALIDITY_MS),
    signingAlgorithm: ALGORITHM,
    keys,
    extensions: [
      new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: host }]),
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
    ],
  });
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  return { cert: Buffer.from(certificate.toString('pem')), key: Buffer.from(x509.PemConverter.encode(pkcs8, 'PRIVATE KEY')) };
}
