/**
 * ACME Renewal Information (RFC 9773; design.md §4.15) without a CA: the identifier a certificate
 * is asked about by (§4.1, checked against the RFC's own example), and the renewal time a
 * suggested window gives (§4.2: a random moment in it, at once when it has begun, never later
 * than two thirds of the lifetime). Against a CA: acme-renewal-info.test.ts.
 */
import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { test } from 'node:test';
import * as x509 from '@peculiar/x509';
import { certificateId } from '../../admin/acme/renewal-info.js';
import { suggestedRenewalTime } from '../../admin/acme/renewal-policy.js';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate (PEM) with serial number `serialHex` whose Authority Key Identifier's keyIdentifier is `keyIdHex`. */
async function certificateWith(serialHex: string, keyIdHex: string): Promise<string> {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialHex,
    subject: 'CN=app.example.com',
    issuer: 'CN=Example CA',
    notBefore: new Date('2025-01-01T00:00:00Z'),
    notAfter: new Date('2025-04-01T00:00:00Z'),
    signingAlgorithm: ALGORITHM,
    publicKey: keys.publicKey,
    signingKey: keys.privateKey,
    extensions: [new x509.AuthorityKeyIdentifierExtension(keyIdHex)],
  }, webcrypto);
  return certificate.toString('pem');
}

test('a certificate is asked about by base64url(keyIdentifier) "." base64url(serial DER): RFC 9773 §4.1\'s example', async () => {
  const keyId = '69885B6B874640' + '41E1B37B847BA0AE2CDE01C8D4';
  // The RFC's serial 0x87654321 has its first bit set: its DER content octets are 00 87 65 43 21.
  const example = await certificateWith('87654321', keyId);
  assert.equal(certificateId(example), 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE');
  assert.equal(certificateId(await certificateWith('12345678', keyId)), 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.EjRWeA', 'no zero byte when the first bit is clear');
  const issuer = await certificateWith('01', '00');
  assert.equal(certificateId(`${example}\n${issuer}`), 'aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE', 'a chain is named by its leaf');
});

test('a certificate without an Authority Key Identifier cannot be asked about', async () => {
  const keys = await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
  const bare = await x509.X509CertificateGenerator.createSelfSigned({ name: 'CN=bare.example.com', keys, signingAlgorithm: ALGORITHM }, webcrypto);
  assert.throws(() => certificateId(bare.toString('pem')), /Authority Key Identifier/);
});

test('the renewal time a suggested window gives: at once when it has begun, a random moment in it, never after two thirds', () => {
  const [now, twoThirds] = [1_000_000, 5_000_000];
  assert.equal(suggestedRenewalTime({ start: now - 10, end: now + 10 }, twoThirds, twoThirds, now), now, 'the window has begun: now');
  assert.equal(suggestedRenewalTime({ start: 2_000_000, end: 3_000_000 }, twoThirds, twoThirds, now, 0.25), 2_250_000, 'uniform in the window');
  assert.equal(suggestedRenewalTime({ start: 2_000_000, end: 3_000_000 }, 2_900_000, twoThirds, now, 0.25), 2_900_000, 'a time already in the window is kept');
  assert.equal(suggestedRenewalTime({ start: 6_000_000, end: 7_000_000 }, twoThirds, twoThirds, now, 0.5), twoThirds, 'a window after two thirds: two thirds stands');
  assert.equal(suggestedRenewalTime({ start: 4_000_000, end: 8_000_000 }, 2_000_000, twoThirds, now, 0.9), twoThirds, 'a moment past two thirds: two thirds');
});
