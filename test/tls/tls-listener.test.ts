/**
 * TLS on the embedded gateway's listeners (README "TLS", design.md §4.14), with certificates of a
 * test CA: the certificate chosen per SNI name, files replaced on disk served without a restart
 * while open connections go on, a broken file keeping the old certificate, TLS 1.1 and weak
 * ciphers refused, HTTP_PORT's 308 that never redirects to a foreign host, HSTS on https answers
 * only, and a sign-in through the identity provider over https.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request, setGlobalDispatcher } from 'undici';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { createService } from '../support/api-client.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startIdentityProvider, type IdentityProvider } from '../support/identity-provider.js';
import { signIn } from '../support/sessions.js';
import { makeTestCa, type TestCa } from '../support/test-certificates.js';
import { handshake, peerOf, requestOn } from '../support/tls-client.js';
import { startEchoUpstream, startUpstream, type EchoUpstream, type Upstream } from '../support/upstream.js';

let dir: string;
let ca: TestCa;
let caPem: Buffer;
let idp: IdentityProvider;
let gw: TestGateway;
let echo: EchoUpstream;
let ownHsts: Upstream;
let port: number;
let httpPort: number;
const logLines: string[] = [];
const logWaiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];

/** Resolves with the first log line from now on that `match` accepts. */
function nextLog(match: (line: string) => boolean): Promise<string> {
  return new Promise((resolve) => logWaiters.push({ match, resolve }));
}

function onLog(line: string): void {
  logLines.push(line);
  for (const waiter of [...logWaiters]) {
    if (!waiter.match(line)) continue;
    logWaiters.splice(logWaiters.indexOf(waiter), 1);
    waiter.resolve(line);
  }
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-tls-'));
  mkdirSync(join(dir, 'certs'));
  mkdirSync(join(dir, 'staging'));
  ca = makeTestCa(dir);
  caPem = readFileSync(ca.caFile);
  const main = ca.issue('default', ['localhost', '127.0.0.1']);
  ca.issue('certs/app.localhost', ['app.localhost']);
  ca.issue('certs/_wildcard.apps.localhost', ['*.apps.localhost']);
  // Every request of this file (undici, and the gateway's own fetch of the provider, which is
  // plain http) trusts the test CA.
  setGlobalDispatcher(new Agent({ connect: { ca: caPem } }));
  [port, httpPort] = [await freePort(), await freePort()];
  const origin = `https://localhost:${port}`;
  idp = await startIdentityProvider({
    clients: [{ clientId: 'gatehouse-tls', clientSecret: 'tls-secret', redirectUris: [`${origin}/auth/callback`], postLogoutRedirectUris: [`${origin}/`] }],
  });
  [echo, ownHsts] = await Promise.all([
    startEchoUpstream(),
    startUpstream((_req, res) => res.writeHead(200, { 'strict-transport-security': 'max-age=60', 'content-length': 2 }).end('ok')),
  ]);
  gw = await startTestGateway({
    PORT: String(port),
    PUBLIC_URL: origin,
    HTTP_PORT: String(httpPort),
    TLS_CERT_FILE: main.cert,
    TLS_KEY_FILE: main.key,
    TLS_CERTS_DIR: join(dir, 'certs'),
    OIDC_ISSUER: idp.issuer,
    OIDC_CLIENT_ID: 'gatehouse-tls',
    OIDC_CLIENT_SECRET: 'tls-secret',
    ADMIN_EMAILS: 'admin@example.com',
    LOG_LEVEL: 'info',
  }, { onLog });
  const admin = await signIn(gw);
  await createService(gw.adminUrl, admin, { name: 'Echo', path: '/echo', targetUrl: echo.origin, requireAuth: true });
  await createService(gw.adminUrl, admin, { name: 'Open', path: '/open', targetUrl: echo.origin, requireAuth: false });
  await createService(gw.adminUrl, admin, { name: 'Own HSTS', path: '/own-hsts', targetUrl: ownHsts.origin, requireAuth: false });
});

after(async () => {
  await gw?.close();
  await Promise.all([idp?.close(), echo?.close(), ownHsts?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the certificate for each SNI name', () => {
  test('an exact name, a wildcard for one label, and the default for any other name or none', async () => {
    const cases: Array<[string | undefined, string]> = [
      ['app.localhost', 'DNS:app.localhost'],
      ['APP.localhost.', 'DNS:app.localhost'],
      ['x.apps.localhost', 'DNS:*.apps.localhost'],
      ['a.b.apps.localhost', 'DNS:localhost, IP Address:127.0.0.1'],
      ['unknown.example', 'DNS:localhost, IP Address:127.0.0.1'],
      [undefined, 'DNS:localhost, IP Address:127.0.0.1'],
    ];
    for (const [servername, names] of cases) {
      const socket = await handshake(port, caPem, servername);
      assert.equal(peerOf(socket).names, names, `SNI ${servername}`);
      socket.destroy();
    }
  });

  test('curl with the test CA verifies the name it asked for, and refuses a name the gateway has no certificate for', async () => {
    // Not spawnSync: the gateway answering curl runs in this process's event loop.
    const curl = (name: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const args = ['-sS', '--max-time', '20', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', ca.caFile, '--resolve', `${name}:${port}:127.0.0.1`, `https://${name}:${port}/nothing`];
        execFile('curl', args, (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }));
      });
    for (const name of ['app.localhost', 'x.apps.localhost', 'localhost']) {
      const run = await curl(name);
      assert.equal(run.code, 0, `${name}: ${run.stderr}`);
      assert.equal(run.stdout, '404');
    }
    const refused = await curl('a.b.apps.localhost');
    assert.equal(refused.code, 60, `a name no certificate covers fails verification (curl: peer certificate): ${refused.stderr}`);
  });
});

describe('files replaced on disk', () => {
  test('a new certificate is served within seconds, and a connection opened before keeps working on its socket', async () => {
    const before = await handshake(port, caPem, 'app.localhost');
    const oldPrint = peerOf(before).fingerprint;
    assert.equal((await requestOn(before, 'localhost', '/nothing')).status, 404);

    const reloaded = nextLog((line) => line.includes('TLS certificate reloaded') && line.includes('app.localhost'));
    const fresh = ca.issue('staging/app.localhost', ['app.localhost', 'app-v2.localhost']);
    renameSync(fresh.key, join(dir, 'certs/app.localhost.key'));
    renameSync(fresh.cert, join(dir, 'certs/app.localhost.crt'));
    await reloaded;
    const after = await handshake(port, caPem, 'app.localhost');
    assert.equal(peerOf(after).names, 'DNS:app.localhost, DNS:app-v2.localhost');
    assert.notEqual(peerOf(after).fingerprint, oldPrint);
    after.destroy();

    const second = await requestOn(before, 'localhost', '/nothing');
    assert.equal(second.status, 404, 'the second request on the connection opened before the reload is answered');
    assert.equal(peerOf(before).fingerprint, oldPrint, 'on the same TLS session as before');
    before.destroy();
  });

  test('the default certificate (TLS_CERT_FILE) is replaced for clients without SNI too', async () => {
    const reloaded = nextLog((line) => line.includes('TLS certificate reloaded') && line.includes('default.crt'));
    const fresh = ca.issue('staging/default', ['localhost', '127.0.0.1', 'default-v2.localhost']);
    renameSync(fresh.key, join(dir, 'default.key'));
    renameSync(fresh.cert, join(dir, 'default.crt'));
    await reloaded;
    const socket = await handshake(port, caPem, undefined);
    assert.equal(peerOf(socket).names, 'DNS:localhost, IP Address:127.0.0.1, DNS:default-v2.localhost');
    socket.destroy();
  });

  test('a broken file is logged and the previous certificate kept', async () => {
    const served = peerOf(await handshake(port, caPem, 'x.apps.localhost'));
    const warned = nextLog((line) => line.includes('TLS certificate not loaded') && line.includes('*.apps.localhost'));
    writeFileSync(join(dir, 'certs/_wildcard.apps.localhost.crt'), '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
    const line = JSON.parse(await warned) as { level: number; msg: string };
    assert.equal(line.level, 40, 'at warn');
    assert.match(line.msg, /previous one is kept/);
    const socket = await handshake(port, caPem, 'x.apps.localhost');
    assert.equal(peerOf(socket).fingerprint, served.fingerprint);
    socket.destroy();
    assert.ok(!logLines.some((logged) => logged.includes('PRIVATE KEY')), 'no key material is logged');
  });
});

describe('protocol versions and ciphers', () => {
  test('TLS 1.1 is refused by the server', async () => {
    // SECLEVEL=0 lets this client offer TLS 1.1 at all, so the refusal is the gateway's.
    await assert.rejects(
      handshake(port, caPem, 'localhost', { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' }),
      (error: NodeJS.ErrnoException) => error.code === 'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
    );
  });

  test('TLS 1.2 with an intermediate cipher and TLS 1.3 are served; a CBC cipher outside the intermediate list is not', async () => {
    const tls12 = await handshake(port, caPem, 'localhost', { maxVersion: 'TLSv1.2' });
    assert.equal(tls12.getProtocol(), 'TLSv1.2');
    assert.equal(tls12.getCipher().name, 'ECDHE-ECDSA-AES128-GCM-SHA256');
    tls12.destroy();
    const tls13 = await handshake(port, caPem, 'localhost');
    assert.equal(tls13.getProtocol(), 'TLSv1.3');
    tls13.destroy();
    await assert.rejects(handshake(port, caPem, 'localhost', { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-ECDSA-AES128-SHA' }));
  });

  test('a session is resumed with its ticket', async () => {
    const first = await handshake(port, caPem, 'localhost', { maxVersion: 'TLSv1.2' });
    const session = first.getSession();
    first.destroy();
    const resumed = await handshake(port, caPem, 'localhost', { maxVersion: 'TLSv1.2', session });
    assert.equal(resumed.isSessionReused(), true);
    resumed.destroy();
  });
});

/** A plain request to HTTP_PORT with `host` and a raw request-target. */
function plain(target: string, host: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: httpPort, path: target, headers: { host } }, (res) => {
      res.resume();
      resolve({ status: res.statusCode!, headers: res.headers });
    });
    req.once('error', reject).end();
  });
}

describe('HTTP_PORT', () => {
  test('answers 308 to the same path and query on https, at PUBLIC_URL\'s port', async () => {
    for (const host of ['localhost', `LOCALHOST.:${httpPort}`]) {
      const res = await plain('/echo/a?b=1', host);
      assert.equal(res.status, 308);
      assert.equal(res.headers.location, `https://localhost:${port}/echo/a?b=1`);
      assert.equal(res.headers['strict-transport-security'], undefined, 'never on plain http');
    }
  });

  test('never redirects to a Host the gateway does not serve, nor to an absolute-form target', async () => {
    for (const [target, host] of [['/x', 'evil.example'], ['/x', 'localhost.evil.example'], ['//evil.example/x', 'evil.example'], ['http://evil.example/x', 'evil.example'], ['http://evil.example/x', 'localhost']]) {
      const res = await plain(target!, host!);
      assert.equal(res.status, 308);
      const location = new URL(String(res.headers.location));
      assert.equal(location.host, `localhost:${port}`, `${target} with Host ${host}`);
      assert.equal(location.protocol, 'https:');
    }
    assert.equal((await plain('//evil.example/x', 'localhost')).headers.location, `https://localhost:${port}//evil.example/x`, 'a path on the gateway\'s own host');
  });
});

describe('Strict-Transport-Security', () => {
  test('on proxied answers and on the gateway\'s own pages over https; a target\'s own wins', async () => {
    for (const path of ['/open/x', '/', '/auth/login-page', '/nothing', '/echo/x']) {
      const res = await request(`https://localhost:${port}${path}`);
      await res.body.dump();
      assert.equal(res.headers['strict-transport-security'], 'max-age=31536000', path);
    }
    const own = await request(`https://localhost:${port}/own-hsts/`);
    await own.body.dump();
    assert.equal(own.headers['strict-transport-security'], 'max-age=60');
  });
});

describe('sign-in over https', () => {
  test('a protected service: signed in through the provider with a __Host- Secure cookie, then served', async () => {
    const jar = new CookieJar();
    const login = await loginThroughProvider({ loginUrl: `https://localhost:${port}/auth/login?returnTo=/echo/me`, email: 'user@example.com', password: 'user-password', jar });
    assert.equal(login.status, 302);
    assert.equal(login.finalLocation, '/echo/me');
    const cookie = jar.all().find((stored) => stored.name === '__Host-gw_session');
    assert.ok(cookie, `a __Host-gw_session cookie: ${jar.all().map((stored) => stored.name).join(', ')}`);
    assert.equal(cookie.secure, true);
    const served = await request(`https://localhost:${port}/echo/me`, { headers: { cookie: jar.header(`https://localhost:${port}/echo/me`) } });
    assert.equal(served.statusCode, 200);
    const body = (await served.body.json()) as { headers: [string, string][] };
    assert.ok(body.headers.some(([name, value]) => name.toLowerCase() === 'x-forwarded-proto' && value === 'https'));
  });
});
