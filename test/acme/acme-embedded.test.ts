/**
 * Certificates by ACME in the embedded gateway (README "Certificates by ACME"), against Debian's
 * pebble with validation on: HTTP-01 answered on HTTP_PORT (pebble's httpPort), certificates for
 * PUBLIC_URL's host at start and for a service host within seconds of its registration, each
 * served by SNI and trusted through pebble's root; renewal at two thirds of pebble's short
 * lifetime, a connection opened before going on; a CA outage logged, counted and retried with
 * backoff while a self-signed stand-in is served, then the certificate once the CA is back.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { apiClient, createService } from '../support/api-client.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { pebbleMissing, startPebble, type Pebble } from '../support/pebble.js';
import { signIn, type SignedIn } from '../support/sessions.js';
import { handshake, peerOf, requestOn } from '../support/tls-client.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

/** Pebble's certificates live this long: renewal (at two thirds) comes within the file's run. */
const VALIDITY_SECONDS = 30;

let pebble: Pebble;
let gw: TestGateway;
let admin: SignedIn;
let call: ReturnType<typeof checkedApiClient>;
let echo: EchoUpstream;
let port: number;
const logs: string[] = [];

/** A handshake for `name` that verifies the chain against pebble's current root; rejects while the certificate is not one it issued. */
async function trustedHandshake(name: string) {
  return handshake(port, Buffer.from(await pebble.roots()), name, { rejectUnauthorized: true });
}

/** Waits until `name` is served a certificate pebble issued, and returns its fingerprint. */
async function issuedFingerprint(name: string, timeoutMs = 30_000): Promise<string> {
  let fingerprint = '';
  await eventually(`a certificate by ACME for ${name}\n${logs.slice(-5).join('')}`, async () => {
    const socket = await trustedHandshake(name);
    fingerprint = peerOf(socket).fingerprint;
    assert.equal(peerOf(socket).names, `DNS:${name}`);
    socket.destroy();
    return true;
  }, timeoutMs, 200);
  return fingerprint;
}

describe('certificates by ACME, embedded, HTTP-01', { skip: pebbleMissing, timeout: 180_000 }, () => {
  before(async () => {
    [port] = [await freePort()];
    const httpPort = await freePort();
    pebble = await startPebble({ httpPort, tlsPort: port, validitySeconds: VALIDITY_SECONDS });
    echo = await startEchoUpstream();
    gw = await startTestGateway({
      PORT: String(port),
      HTTP_PORT: String(httpPort),
      PUBLIC_URL: `https://gw.localhost:${port}`,
      ACME_EMAIL: 'ops@example.com',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      ADMIN_EMAILS: 'admin@example.com',
      LOG_LEVEL: 'info',
    }, { onLog: (line) => logs.push(line) });
    admin = await signIn(gw);
    const described = await apiClient(gw.adminUrl)('GET', '/api/openapi.json');
    call = checkedApiClient(gw.adminUrl, new OpenApiChecker(described.json));
  });

  /** `GET /api/certificates`' entry for `host`, the answer checked against the OpenAPI document. */
  async function statusOf(host: string): Promise<Record<string, unknown>> {
    const answer = await call('GET', '/api/certificates', { as: admin });
    assert.equal(answer.status, 200, answer.text);
    return (answer.json as Array<Record<string, unknown>>).find((entry) => entry.host === host)!;
  }

  after(async () => {
    await gw?.close();
    await echo?.close();
    await pebble?.close();
  });

  test('PUBLIC_URL\'s host gets its certificate at start, also served to clients without SNI', async () => {
    await issuedFingerprint('gw.localhost');
    const socket = await handshake(port, Buffer.from(await pebble.roots()), undefined);
    assert.equal(peerOf(socket).names, 'DNS:gw.localhost');
    socket.destroy();
  });

  test('a service host gets its certificate within seconds of its registration, and the service answers over it', async () => {
    const started = Date.now();
    await createService(gw.adminUrl, admin, { name: 'App', path: '/', hosts: ['app.localhost'], targetUrl: echo.origin, requireAuth: false });
    await issuedFingerprint('app.localhost');
    const tookMs = Date.now() - started;
    assert.ok(tookMs < 20_000, `issued after ${tookMs} ms`);
    const socket = await trustedHandshake('app.localhost');
    const answer = await requestOn(socket, 'app.localhost', '/hello');
    assert.equal(answer.status, 200);
    socket.destroy();
    assert.ok(logs.some((line) => line.includes('certificate by ACME issued') && line.includes('app.localhost')));
  });

  test('a certificate is renewed at two thirds of its lifetime, before it expires; a connection opened before keeps its own and works', async () => {
    const opened = await trustedHandshake('app.localhost');
    const first = peerOf(opened).fingerprint;
    const expires = Date.parse(opened.getPeerCertificate().valid_to);
    await eventually('a renewed certificate for app.localhost', async () => {
      assert.equal((await requestOn(opened, 'app.localhost', '/still-open')).status, 200);
      const socket = await trustedHandshake('app.localhost');
      const renewed = peerOf(socket).fingerprint !== first;
      socket.destroy();
      return renewed;
    }, VALIDITY_SECONDS * 1_000, 500);
    assert.ok(Date.now() < expires, 'renewed before the first certificate expired');
    assert.equal((await requestOn(opened, 'app.localhost', '/still-open')).status, 200);
    assert.equal(peerOf(opened).fingerprint, first, 'the open connection keeps the certificate it began with');
    opened.destroy();
  });

  test('a CA outage: the order fails, is logged, counted and retried with backoff while a self-signed stand-in is served; the certificate comes once the CA is back', async () => {
    await pebble.stop();
    await createService(gw.adminUrl, admin, { name: 'Late', path: '/', hosts: ['late.localhost'], targetUrl: echo.origin, requireAuth: false });
    await eventually('the failed order to be logged', () => logs.some((line) => line.includes('certificate by ACME not obtained') && line.includes('late.localhost')));
    await eventually('a self-signed stand-in for late.localhost', async () => {
      const standIn = await handshake(port, readFileSync(pebble.caFile), 'late.localhost');
      const { subject, issuer } = standIn.getPeerCertificate();
      standIn.destroy();
      return subject.CN === 'late.localhost' && issuer.CN === 'late.localhost';
    });
    assert.equal(logs.filter((line) => line.includes('serving a self-signed one') && line.includes('late.localhost')).length, 1, 'said once why');
    const metrics = await (await request(`${gw.adminUrl}/metrics`)).body.text();
    assert.match(metrics, /gatehouse_acme_orders_total\{outcome="failed"\} [1-9]/);
    assert.match(metrics, /gatehouse_acme_certificates\{status="failing"\} [1-9]/);
    const failing = await statusOf('late.localhost');
    assert.equal(failing.status, 'failing');
    assert.equal(failing.notAfter, null);
    assert.match(String(failing.lastError), /\S/);
    assert.ok(Date.parse(String(failing.nextRenewal)) > Date.now() - 1_000, 'a retry is scheduled');
    await pebble.start();
    await issuedFingerprint('late.localhost', 90_000);
    const valid = await statusOf('late.localhost');
    assert.equal(valid.status, 'valid');
    assert.equal(valid.lastError, null);
    assert.match(String(valid.issuer), /^Pebble Intermediate CA/);
    assert.ok(Date.parse(String(valid.nextRenewal)) < Date.parse(String(valid.notAfter)), 'renewed before it expires');
  });

  test('the console\'s Certificates page lists every host with its issuer, not-after, next renewal and last error', async () => {
    const page = await apiClient(gw.adminUrl)('GET', '/dashboard/certificates', { as: admin });
    assert.equal(page.status, 200, page.text);
    for (const text of ['gw.localhost', 'app.localhost', 'late.localhost', 'Not after', 'Next renewal', 'Last error', 'Pebble Intermediate CA']) assert.ok(page.text.includes(text), text);
    assert.match(page.text, /<a href="\/dashboard\/certificates" aria-current="page">Certificates<\/a>/);
  });
});
