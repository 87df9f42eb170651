import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { request } from 'undici';
import { CookieJar, loginThroughProvider } from './fixtures/browserless-login.js';
import { freePort } from './support/free-port.js';

const DEMO = new URL('./fixtures/demo.js', import.meta.url).pathname;

test('npm run demo: sign in as the demo admin, use the protected demo service, stop cleanly', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
  const [port, adminPort, idpPort, upstreamPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const child = spawn(process.execPath, [DEMO], {
    env: {
      ...process.env,
      PORT: String(port),
      ADMIN_PORT: String(adminPort),
      DEMO_IDP_PORT: String(idpPort),
      DEMO_UPSTREAM_PORT: String(upstreamPort),
      DATABASE_PATH: join(dir, 'demo.db'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
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
    const body = (await echo.body.json()) as { headers: Record<string, string> };
    assert.equal(body.headers['x-forwarded-email'], 'admin@example.com');
    const open = await request(`${base}/public-echo/`);
    assert.equal(open.statusCode, 200);
    await open.body.dump();

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
    assert.deepEqual(((await services.body.json()) as Array<{ path: string }>).map((s) => s.path).sort(), ['/echo', '/public-echo']);
  } finally {
    child.kill('SIGINT');
    const [code] = (await once(child, 'exit')) as [number | null];
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0);
  }
});

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
