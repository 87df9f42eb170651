/**
 * TLS in split mode (README "TLS"): each `start:proxy` process, and each PROXY_WORKERS cluster
 * worker, loads the certificate files itself, chooses them per SNI name, serves a replaced file
 * without a restart while a connection opened before goes on, and sends HSTS on proxied answers
 * and on the admin process's pages it hands on; HTTP_PORT redirects from a cluster's workers.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { startSplitGateway, type ProxyProcess, type SplitGateway } from '../support/split-gateway.js';
import { makeTestCa, type TestCa } from '../support/test-certificates.js';
import { handshake, peerOf, requestOn } from '../support/tls-client.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let dir: string;
let ca: TestCa;
let caPem: Buffer;
let split: SplitGateway;
let cluster: ProxyProcess;
let clusterHttpPort: number;
let echo: EchoUpstream;

const portOf = (proxy: ProxyProcess) => Number(new URL(proxy.url).port);

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-split-'));
  mkdirSync(join(dir, 'certs'));
  mkdirSync(join(dir, 'staging'));
  ca = makeTestCa(dir);
  caPem = readFileSync(ca.caFile);
  const main = ca.issue('default', ['localhost']);
  ca.issue('certs/app.localhost', ['app.localhost']);
  echo = await startEchoUpstream();
  split = await startSplitGateway({
    PUBLIC_URL: 'https://localhost:8443',
    TLS_CERT_FILE: main.cert,
    TLS_KEY_FILE: main.key,
    TLS_CERTS_DIR: join(dir, 'certs'),
  });
  clusterHttpPort = await freePort();
  cluster = await split.startProxy({ PROXY_WORKERS: '2', HTTP_PORT: String(clusterHttpPort) });
  const admin = await split.signIn();
  await split.createService(admin, { name: 'Open', path: '/open', targetUrl: echo.origin, requireAuth: false });
});

after(async () => {
  await cluster?.process.stop();
  await split?.close();
  await echo?.close();
  rmSync(dir, { recursive: true, force: true });
});

const proxies = () => [...split.proxies, cluster];

test('every proxy process and cluster worker serves the certificate of each SNI name, with HSTS on proxied and handed-off answers', async () => {
  for (const proxy of proxies()) {
    // Two rounds on the cluster: the primary hands connections to its workers round robin.
    for (let round = 0; round < 2; round++) {
      const app = await handshake(portOf(proxy), caPem, 'app.localhost', { rejectUnauthorized: true });
      assert.equal(peerOf(app).names, 'DNS:app.localhost');
      app.destroy();
      const socket = await handshake(portOf(proxy), caPem, undefined);
      assert.equal(peerOf(socket).names, 'DNS:localhost');
      await eventually('the service to reach the proxy', async () => (await requestOn(socket, 'localhost', '/open/x')).status === 200);
      const proxied = await requestOn(socket, 'localhost', '/open/x');
      assert.equal(proxied.headers['strict-transport-security'], 'max-age=31536000');
      const page = await requestOn(socket, 'localhost', '/auth/login-page');
      assert.equal(page.status, 200, 'handed to the admin process');
      assert.equal(page.headers['strict-transport-security'], 'max-age=31536000');
      socket.destroy();
    }
  }
});

test('a certificate replaced on disk reaches every process without a restart; a connection opened before keeps working', async () => {
  const opened = await handshake(portOf(split.proxies[0]), caPem, 'app.localhost');
  const oldPrint = peerOf(opened).fingerprint;
  const fresh = ca.issue('staging/app.localhost', ['app.localhost', 'app-v2.localhost']);
  renameSync(fresh.key, join(dir, 'certs/app.localhost.key'));
  renameSync(fresh.cert, join(dir, 'certs/app.localhost.crt'));
  for (const proxy of proxies()) {
    await eventually(`${proxy.url} to serve the new certificate`, async () => {
      const served: string[] = [];
      for (let i = 0; i < 4; i++) {
        const socket = await handshake(portOf(proxy), caPem, 'app.localhost');
        served.push(peerOf(socket).names);
        socket.destroy();
      }
      return served.every((names) => names === 'DNS:app.localhost, DNS:app-v2.localhost');
    });
  }
  assert.equal((await requestOn(opened, 'localhost', '/nothing')).status, 404);
  assert.equal(peerOf(opened).fingerprint, oldPrint);
  opened.destroy();
});

test('HTTP_PORT on a cluster of workers answers 308 to PUBLIC_URL\'s origin, never to a foreign Host', async () => {
  for (const host of ['localhost', 'evil.example']) {
    const location = await new Promise<string | undefined>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: clusterHttpPort, path: '/open/x?y=1', headers: { host } }, (res) => {
        res.resume();
        assert.equal(res.statusCode, 308);
        resolve(res.headers.location);
      }).once('error', reject).end();
    });
    assert.equal(location, host === 'localhost' ? 'https://localhost:8443/open/x?y=1' : 'https://localhost:8443/');
  }
});
