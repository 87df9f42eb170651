/**
 * Certificates by ACME for an https ADMIN_URL (README "Certificates by ACME"), embedded, against
 * pebble with validation on: ADMIN_URL's host is ordered beside PUBLIC_URL's and proved by
 * TLS-ALPN-01 on PORT (where the CA reaches the gateway), and ADMIN_PORT serves its certificate,
 * by SNI and to clients that send none, with the admin plane behind it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { pebbleMissing, startPebble, type Pebble } from '../support/pebble.js';
import { handshake, peerOf, requestOn } from '../support/tls-client.js';

let pebble: Pebble;
let gw: TestGateway;
let port: number;
let adminPort: number;
const logs: string[] = [];

/** A handshake with 127.0.0.1:`onPort` verified against pebble's current root; rejects while the certificate is not one pebble issued. */
async function trustedHandshake(onPort: number, name: string | undefined) {
  return handshake(onPort, Buffer.from(await pebble.roots()), name, { rejectUnauthorized: true, ...(name === undefined && { checkServerIdentity: () => undefined }) });
}

describe('certificates by ACME for an https ADMIN_URL', { skip: pebbleMissing, timeout: 120_000 }, () => {
  before(async () => {
    [port, adminPort] = [await freePort(), await freePort()];
    // No HTTP_PORT: TLS-ALPN-01 on PORT, which pebble reaches, proves both hosts.
    pebble = await startPebble({ httpPort: 9, tlsPort: port });
    gw = await startTestGateway({
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      PUBLIC_URL: `https://gw.localhost:${port}`,
      ADMIN_URL: `https://admin.localhost:${adminPort}`,
      ACME_EMAIL: 'ops@example.com',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      LOG_LEVEL: 'info',
    }, { onLog: (line) => logs.push(line) });
  });

  after(async () => {
    await gw?.close();
    await pebble?.close();
  });

  test('ADMIN_PORT serves ADMIN_URL\'s host its certificate by ACME, by SNI and without, and the admin plane answers over it', async () => {
    await eventually(`a certificate by ACME for admin.localhost on ADMIN_PORT\n${logs.slice(-5).join('')}`, async () => {
      const socket = await trustedHandshake(adminPort, 'admin.localhost');
      const { names } = peerOf(socket);
      socket.destroy();
      return names === 'DNS:admin.localhost';
    }, 30_000, 250);
    const socket = await trustedHandshake(adminPort, undefined);
    assert.equal(peerOf(socket).names, 'DNS:admin.localhost', 'the default for clients without SNI');
    const described = await requestOn(socket, `admin.localhost:${adminPort}`, '/api/openapi.json');
    assert.equal(described.status, 200, described.body);
    assert.match(described.body, /\/api\/certificates/);
    assert.equal(described.headers['strict-transport-security'], 'max-age=31536000');
    socket.destroy();
    assert.ok(logs.some((line) => line.includes('certificate by ACME issued') && line.includes('admin.localhost')));
  });

  test('PORT keeps PUBLIC_URL\'s host\'s certificate; each listener has its own default', async () => {
    await eventually('a certificate by ACME for gw.localhost on PORT', async () => {
      const socket = await trustedHandshake(port, undefined);
      const { names } = peerOf(socket);
      socket.destroy();
      return names === 'DNS:gw.localhost';
    }, 30_000, 250);
  });
});
