/**
 * TLS beyond the public listener's default pair (README "TLS"): ADMIN_URL's listener with its own
 * certificate, TLS_CERTS_DIR alone (a name it has no pair for gets no handshake), a request
 * served without its upgrade on a TLS connection, and a start refused for a mismatched pair.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { makeTestCa, type LeafFiles, type TestCa } from '../support/test-certificates.js';
import { handshake, peerOf, requestOn } from '../support/tls-client.js';

let dir: string;
let ca: TestCa;
let caPem: Buffer;
let adminPair: LeafFiles;
let gw: TestGateway;
let adminPort: number;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-admin-'));
  mkdirSync(join(dir, 'certs'));
  ca = makeTestCa(dir);
  caPem = readFileSync(ca.caFile);
  ca.issue('certs/localhost', ['localhost']);
  adminPair = ca.issue('admin', ['admin.localhost']);
  adminPort = await freePort();
  gw = await startTestGateway({
    PUBLIC_URL: 'https://localhost',
    TLS_CERTS_DIR: join(dir, 'certs'),
    ADMIN_PORT: String(adminPort),
    ADMIN_URL: `https://admin.localhost:${adminPort}`,
    ADMIN_TLS_CERT_FILE: adminPair.cert,
    ADMIN_TLS_KEY_FILE: adminPair.key,
  });
});

after(async () => {
  await gw?.close();
  rmSync(dir, { recursive: true, force: true });
});

test('ADMIN_PORT speaks HTTPS with ADMIN_TLS_* for ADMIN_URL, with HSTS', async () => {
  for (const servername of ['admin.localhost', undefined]) {
    const socket = await handshake(adminPort, caPem, servername);
    assert.equal(peerOf(socket).names, 'DNS:admin.localhost');
    const page = await requestOn(socket, `admin.localhost:${adminPort}`, '/auth/login-page');
    assert.equal(page.status, 200);
    assert.equal(page.headers['strict-transport-security'], 'max-age=31536000');
    socket.destroy();
  }
});

test('TLS_CERTS_DIR alone: its names are served, any other name or none gets no handshake', async () => {
  const socket = await handshake(gw.gateway.port, caPem, 'localhost', { rejectUnauthorized: true });
  assert.equal(peerOf(socket).names, 'DNS:localhost');
  assert.equal((await requestOn(socket, 'localhost', '/nothing')).status, 404);
  socket.destroy();
  await assert.rejects(handshake(gw.gateway.port, caPem, 'other.localhost'));
  await assert.rejects(handshake(gw.gateway.port, caPem, undefined));
});

test('a request with an upgrade the gateway does not take is served as a plain one on the TLS connection, which stays usable', async () => {
  const socket = await handshake(gw.gateway.port, caPem, 'localhost');
  const upgraded = await requestOn(socket, 'localhost', '/nothing', ['Connection: upgrade', 'Upgrade: foo']);
  assert.equal(upgraded.status, 404);
  assert.equal((await requestOn(socket, 'localhost', '/nothing')).status, 404);
  socket.destroy();
});

test('a certificate and a key that do not match stop the start, naming the variables', async () => {
  const other = ca.issue('other', ['localhost']);
  await assert.rejects(
    startTestGateway({ PUBLIC_URL: 'https://localhost', TLS_CERT_FILE: adminPair.cert, TLS_KEY_FILE: other.key }),
    /^Error: TLS_CERT_FILE, TLS_KEY_FILE: .*key values mismatch/,
  );
});
