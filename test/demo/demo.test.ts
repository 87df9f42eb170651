import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { CookieJar, loginThroughProvider } from '../support/browserless-login.js';
import { freePort } from '../support/free-port.js';
import { childPids, processGone } from '../support/gatehouse-process.js';
import { clientCredentialsToken } from '../support/machine-client.js';
import { headerValues, type Echo } from '../support/upstream.js';

const DEMO = new URL('./demo.js', import.meta.url).pathname;
const ROOT = new URL('../../../', import.meta.url).pathname;

/** The demo's settings on free ports, its database in `dir`. */
async function demoEnv(dir: string): Promise<{ env: NodeJS.ProcessEnv; ports: number[] }> {
  const [port, adminPort, idpPort, upstreamPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    ...process.env,
    PORT: String(port),
    ADMIN_PORT: String(adminPort),
    DEMO_IDP_PORT: String(idpPort),
    DEMO_UPSTREAM_PORT: String(upstreamPort),
    DATABASE_PATH: join(dir, 'demo.db'),
    LOG_LEVEL: 'warn',
  };
  return { env, ports: [port, adminPort, idpPort, upstreamPort] };
}

test('npm run demo: sign in as the demo admin, use the protected demo service, stop cleanly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
  const { env, ports } = await demoEnv(dir);
  const [port, adminPort] = ports as [number, number];
  const child = spawn(process.execPath, [DEMO], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const printed = await outputUntil(child.stdout!, /Press Ctrl\+C to stop/);
    assert.match(printed, /admin@example\.com +password: admin-password/);
    assert.match(printed, new RegExp(`http://localhost:${port}/echo/`));

    const base = `http://localhost:${port}`;
    const jar = new CookieJar();
    const login = await loginThroughProvider({ loginUrl: `${base}/auth/login?returnTo=%2Fecho%2F`, email: 'admin@example.com', password: 'admin-password', jar });
    assert.equal(login.finalLocation, '/echo/');
    const cookie = jar.header(`${base}/echo/`);
    const echo = await request(`${base}/echo/`, { headers: { cookie } });
    assert.equal(echo.statusCode, 200);
    const body = (await echo.body.json()) as Echo;
    assert.deepEqual(headerValues(body, 'x-forwarded-email'), ['admin@example.com']);
    // The machine client of the printed instructions, as curl would be.
    assert.match(printed, /-u demo-machine:demo-machine-secret -d grant_type=client_credentials/);
    const token = await clientCredentialsToken({ issuer: `http://127.0.0.1:${ports[2]}`, clientId: 'demo-machine', clientSecret: 'demo-machine-secret', resource: base });
    const machine = await request(`${base}/echo/`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(machine.statusCode, 200);
    assert.deepEqual(headerValues((await machine.body.json()) as Echo, 'x-forwarded-user'), ['demo-machine']);
    const open = await request(`${base}/public-echo/`);
    assert.equal(open.statusCode, 200);
    await open.body.dump();
    // The service on its own host: signed in already, so the sign-in origin hands the session over.
    assert.match(printed, new RegExp(`Own host +http://echo.localhost:${port}/`));
    const onHost = await signInOnHost(port, `echo.localhost:${port}`, cookie);
    assert.deepEqual(headerValues(onHost, 'x-forwarded-email'), ['admin@example.com']);
    assert.deepEqual(headerValues(onHost, 'x-forwarded-host'), [`echo.localhost:${port}`]);

    // The console is on its own origin, the admin port, with its own sign-in.
    const consoleUrl = `http://localhost:${adminPort}`;
    assert.match(printed, new RegExp(`Console +${consoleUrl}/dashboard`));
    const onPublic = await request(`${base}/api/services`, { headers: { cookie } });
    assert.equal(onPublic.statusCode, 404);
    await onPublic.body.dump();
    const adminJar = new CookieJar();
    const adminLogin = await loginThroughProvider({ loginUrl: `${consoleUrl}/auth/login?returnTo=%2Fdashboard`, email: 'admin@example.com', password: 'admin-password', jar: adminJar });
    assert.equal(adminLogin.finalLocation, '/dashboard');
    const services = await request(`${consoleUrl}/api/services`, { headers: { cookie: adminJar.header(`${consoleUrl}/api/services`) } });
    assert.equal(services.statusCode, 200);
    assert.deepEqual(((await services.body.json()) as Array<{ path: string }>).map((s) => s.path).sort(), ['/', '/echo', '/public-echo']);
  } finally {
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  }
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  test(`npm run demo: ${signal} to the npm process stops the identity provider, the upstream and the gateway, and says so`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
    const { env, ports } = await demoEnv(dir);
    // --ignore-scripts skips predemo (a build, which would rewrite dist/ under the running tests).
    const npm = spawn('npm', ['run', 'demo', '--ignore-scripts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let demo: number[] = [];
    try {
      await outputUntil(npm.stdout!, /Press Ctrl\+C to stop/);
      demo = childPids(npm.pid!);
      let printed = '';
      npm.stdout!.on('data', (chunk) => (printed += String(chunk)));
      npm.kill(signal);
      const [code, killedBy] = (await once(npm, 'exit')) as [number | null, NodeJS.Signals | null];
      assert.equal(code, 0, `npm ended by ${killedBy}; the demo printed: ${printed}`);
      assert.match(printed, /Gatehouse demo stopped\./);
      for (const port of ports) assert.equal(await connectionRefused(port), true, `port ${port} is free`);
    } finally {
      for (const pid of [npm.pid!, ...demo]) if (!processGone(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * A browser signed in at the sign-in origin (`cookie`) opening `/` on `host`, a service host:
 * sent to sign in, handed over without the provider, back on the page. Returns what the upstream got.
 */
async function signInOnHost(port: number, host: string, cookie: string): Promise<Echo> {
  const onHost = (path: string, headers: Record<string, string>) => request(`http://127.0.0.1:${port}${path}`, { headers: { host, ...headers } });
  const asked = await onHost('/', { accept: 'text/html' });
  assert.equal(asked.statusCode, 302);
  const handoffCookie = String(asked.headers['set-cookie']).split(';')[0]!;
  const handOver = await request(String(asked.headers.location), { headers: { cookie } });
  assert.equal(handOver.statusCode, 302);
  const callback = new URL(String(handOver.headers.location));
  assert.equal(callback.host, host);
  const redeemed = await onHost(callback.pathname + callback.search, { cookie: handoffCookie });
  assert.equal(redeemed.statusCode, 302);
  const hostSession = ([] as string[]).concat(redeemed.headers['set-cookie'] ?? []).find((value) => value.startsWith('gw_session='))!.split(';')[0]!;
  const page = await onHost(String(redeemed.headers.location), { cookie: hostSession });
  assert.equal(page.statusCode, 200);
  return (await page.body.json()) as Echo;
}

/** Whether a TCP connection to 127.0.0.1:`port` is refused (nothing listens there). */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Collects the child's output until it matches; keeps draining it afterwards. */
function outputUntil(stream: NodeJS.ReadableStream, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    stream.on('data', (chunk) => {
      seen += String(chunk);
      if (pattern.test(seen)) resolve(seen);
    });
    stream.once('end', () => reject(new Error(`output ended before ${pattern}: ${seen}`)));
  });
}
