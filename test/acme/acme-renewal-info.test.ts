/**
 * ACME Renewal Information (RFC 9773; README "Certificates by ACME") against pebble with validation
 * on, behind a front that adds what pebble 2.4 lacks (test/support/renewal-info-front.ts): a CA
 * whose window has begun gets a certificate renewed within seconds, long before two thirds of its
 * hour, by an order naming the certificate it replaces; the renewed one is asked about too (the
 * certID the test computes from the served certificate) and renewed at a random moment of its
 * later window; a renewal-information endpoint that fails is logged once, and two thirds stands.
 */
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as x509 from '@peculiar/x509';
import { renewalTime } from '../../admin/acme/renewal-policy.js';
import { apiClient, createService } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { pebbleMissing, startPebble, type Pebble } from '../support/pebble.js';
import { startRenewalInfoFront, type RenewalInfoAnswer, type RenewalInfoFront } from '../support/renewal-info-front.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { handshake } from '../support/tls-client.js';

/** Pebble's certificates live an hour here: two thirds of it (40 min) is far past the file's run. */
const VALIDITY_SECONDS = 3600;
const MINUTE = 60_000;

let dir: string;
let pebble: Pebble;
let front: RenewalInfoFront;
let gw: TestGateway;
let admin: SignedIn;
let port: number;
/** When the gateway was started: its first certificate is issued after it. */
let started: number;
const logs: string[] = [];
/** What the front answers for a certID the test has not named: the window set by each test. */
let answerOthers: (certId: string) => RenewalInfoAnswer;
/** The first certID asked about: its window has begun (renew now). */
let first: string | undefined;
/** The window the front gave every later certificate of the first test. */
const later = { start: Date.now() + 10 * MINUTE, end: Date.now() + 20 * MINUTE, retryAfterSeconds: 3600 };

/**
 * The certificate `name` is served now, checked against pebble's roots, with its RFC 9773 §4.1
 * certID computed here: AKI keyIdentifier by @peculiar/x509, the serial's DER bytes from
 * node:crypto's hex (a zero byte first when its first bit is set).
 */
async function served(name: string): Promise<{ certId: string; notBefore: number; notAfter: number }> {
  const socket = await handshake(port, Buffer.from(await pebble.roots()), name, { rejectUnauthorized: true });
  const raw = socket.getPeerCertificate().raw;
  socket.destroy();
  const certificate = new X509Certificate(raw);
  const keyId = Buffer.from(new x509.X509Certificate(raw).getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId!, 'hex');
  const serial = Buffer.from(certificate.serialNumber.padStart(certificate.serialNumber.length + (certificate.serialNumber.length % 2), '0'), 'hex');
  const der = serial[0]! >= 0x80 ? Buffer.concat([Buffer.of(0), serial]) : serial;
  return { certId: `${keyId.toString('base64url')}.${der.toString('base64url')}`, notBefore: Date.parse(certificate.validFrom), notAfter: Date.parse(certificate.validTo) };
}

/** `GET /api/certificates`' entry for `host`. */
async function statusOf(host: string): Promise<Record<string, unknown>> {
  const answer = await apiClient(gw.adminUrl)('GET', '/api/certificates', { as: admin });
  assert.equal(answer.status, 200, answer.text);
  return (answer.json as Array<Record<string, unknown>>).find((entry) => entry.host === host)!;
}

describe('certificates by ACME with renewal information (RFC 9773)', { skip: pebbleMissing, timeout: 180_000 }, () => {
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-ari-'));
    port = await freePort();
    const httpPort = await freePort();
    pebble = await startPebble({ httpPort, tlsPort: port, validitySeconds: VALIDITY_SECONDS });
    answerOthers = () => later;
    front = await startRenewalInfoFront(pebble, dir, (certId) => {
      first ??= certId;
      return certId === first ? { start: Date.now() - MINUTE, end: Date.now() + MINUTE, retryAfterSeconds: 3600 } : answerOthers(certId);
    });
    started = Date.now();
    gw = await startTestGateway({
      PORT: String(port),
      HTTP_PORT: String(httpPort),
      PUBLIC_URL: `https://gw.localhost:${port}`,
      ACME_EMAIL: 'ops@example.com',
      ACME_DIRECTORY_URL: front.directoryUrl,
      ACME_CA_FILE: front.caFile,
      ADMIN_EMAILS: 'admin@example.com',
      LOG_LEVEL: 'info',
    }, { onLog: (line) => logs.push(line) });
    admin = await signIn(gw);
  });

  after(async () => {
    await gw?.close();
    await front?.close();
    await pebble?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('a window that has begun renews the certificate at once, long before two thirds of its lifetime, by an order that names the one it replaces', async () => {
    let renewed: Awaited<ReturnType<typeof served>> | undefined;
    await eventually(`a renewed certificate for gw.localhost\n${logs.slice(-5).join('')}`, async () => {
      renewed = await served('gw.localhost');
      return first !== undefined && renewed.certId !== first && front.asked.includes(renewed.certId);
    }, 60_000, 250);
    assert.ok(renewed!.notAfter - renewed!.notBefore >= 59 * MINUTE, 'pebble issues hour-long certificates');
    const firstTwoThirds = started + renewalTime(0, VALIDITY_SECONDS * 1_000);
    assert.ok(Date.now() < firstTwoThirds - 30 * MINUTE, 'renewed long before two thirds of the first certificate\'s lifetime');
    assert.equal(front.asked[0], first, 'the first certificate was asked about right after its issuance');
    assert.deepEqual(front.replaces, [undefined, first], 'the first order replaces nothing, the renewal the first certificate');
    assert.ok(logs.some((line) => line.includes('certificate renewal time set by the CA\'s renewal information') && line.includes('gw.localhost')));
    // The answer about the renewed certificate was just given: its renewal time follows it.
    await eventually('the renewed certificate\'s renewal in its own suggested window, before two thirds', async () => {
      const status = await statusOf('gw.localhost');
      const nextRenewal = Date.parse(String(status.nextRenewal));
      return Date.parse(String(status.notAfter)) === renewed!.notAfter && nextRenewal >= later.start && nextRenewal <= later.end;
    });
  });

  test('a renewal-information endpoint that fails is logged once, and the certificate renews at two thirds of its lifetime', async () => {
    answerOthers = () => ({ status: 503 });
    const asked = front.asked.length;
    await createService(gw.adminUrl, admin, { name: 'Plain', path: '/', hosts: ['plain.localhost'], targetUrl: 'http://127.0.0.1:9', requireAuth: false });
    let certificate: Awaited<ReturnType<typeof served>> | undefined;
    await eventually('a certificate for plain.localhost', async () => {
      certificate = await served('plain.localhost'); // throws while a stand-in is served
      return true;
    }, 30_000, 250);
    // The first failure is retried 10 s later (the orders' backoff): wait for that second ask.
    await eventually('the renewal information asked about twice', () => front.asked.slice(asked).filter((id) => id === certificate!.certId).length >= 2, 40_000, 250);
    const warned = logs.filter((line) => line.includes('renewal information (RFC 9773) not fetched') && line.includes('plain.localhost'));
    assert.equal(warned.length, 1, 'said once');
    const status = await statusOf('plain.localhost');
    assert.equal(status.nextRenewal, new Date(renewalTime(certificate!.notBefore, certificate!.notAfter)).toISOString());
  });
});
