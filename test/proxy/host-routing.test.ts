/**
 * Services on host names (issue 31, design.md §3.2 "routing by host"), against a running data
 * plane and real upstreams: services on `app.localhost`, `*.apps.localhost` and
 * `special.apps.localhost` beside a path service, every spelling of `Host` a client may send, the
 * gateway's paths on a service host, the reserved prefix `/.gatehouse/` in every spelling,
 * `X-Forwarded-Host`, the response mapping per host, and sign-in on a host service.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest, type RawResponse } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { headerValues, startEchoUpstream, startUpstream, type Echo, type EchoUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const PUBLIC_URL = 'http://gateway.localhost:8080';

describe('routing by host', { timeout: 20_000 }, () => {
  let upstream: EchoUpstream;
  /** Answers every request with a redirect and cookies pointing into its base path `/base`. */
  let redirecting: Upstream;
  let gateway: TestDataPlane;
  let privateService: ReturnType<typeof service>;

  before(async () => {
    upstream = await startEchoUpstream();
    redirecting = await startUpstream((_req, res) => {
      res.writeHead(302, { location: `${redirecting.origin}/base/next?q=1`, 'set-cookie': ['scoped=1; Path=/base', 'plain=2'] }).end();
    });
    const target = (base: string) => `${upstream.origin}${base}`;
    privateService = service({ path: '/private', targetUrl: target('/app-private'), hosts: ['app.localhost'], requireAuth: true });
    gateway = await startDataPlane({
      env: { PUBLIC_URL },
      services: [
        service({ path: '/', targetUrl: target('/app'), hosts: ['app.localhost'] }),
        privateService,
        service({ path: '/', targetUrl: target('/wild'), hosts: ['*.apps.localhost'] }),
        service({ path: '/', targetUrl: target('/special'), hosts: ['special.apps.localhost'] }),
        service({ path: '/only', targetUrl: target('/only'), hosts: ['paths.localhost'] }),
        service({ path: '/', targetUrl: target('/on-public'), hosts: ['gateway.localhost'] }),
        service({ path: '/', targetUrl: `${redirecting.origin}/base`, hosts: ['redirect.localhost'] }),
        service({ path: '/docs', targetUrl: target('/docs') }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await redirecting.close();
    await upstream.close();
  });

  /** `GET <target>` with `Host: <host>` (HTTP/1.0 without one when undefined), and `lines` more. */
  function get(target: string, host: string | undefined, lines: string[] = []): Promise<RawResponse> {
    const head = host === undefined ? [`GET ${target} HTTP/1.0`] : [`GET ${target} HTTP/1.1`, `Host: ${host}`];
    return rawRequest(gateway.port, [...head, ...lines, 'Connection: close', '', ''].join('\r\n'));
  }

  /** What the echo upstream received for `GET <target>` on `host`. */
  async function received(target: string, host: string | undefined, lines: string[] = []): Promise<Echo> {
    const response = await get(target, host, lines);
    assert.equal(response.status, 200, `${host} ${target}: ${response.body}`);
    return JSON.parse(response.body) as Echo;
  }

  /** Asserts `GET <target>` on `host` is 404 `Service not found` and reached no upstream and no admin plane. */
  async function notFound(target: string, host: string): Promise<void> {
    const [forwarded, handedOff] = [upstream.requests.length, gateway.adminRequests.length];
    const response = await get(target, host);
    assert.equal(response.status, 404, `${host} ${target}`);
    assert.deepEqual(JSON.parse(response.body), { error: 'Service not found' }, `${host} ${target}`);
    assert.equal(upstream.requests.length, forwarded, `${host} ${target} was forwarded`);
    assert.equal(gateway.adminRequests.length, handedOff, `${host} ${target} was handed to the admin plane`);
  }

  it('routes a service host in every spelling of Host: case, one trailing dot, a port', async () => {
    for (const host of ['app.localhost', 'APP.LocalHost', 'app.localhost.', 'app.localhost:8080', 'App.localhost.:1']) {
      assert.equal((await received('/x?q=1', host)).url, '/app/x?q=1', host);
    }
  });

  it('routes one label under a wildcard to it, an exact name before it, and nothing else', async () => {
    assert.equal((await received('/x', 'a.apps.localhost')).url, '/wild/x');
    assert.equal((await received('/x', 'B.Apps.Localhost.')).url, '/wild/x');
    assert.equal((await received('/x', 'special.apps.localhost')).url, '/special/x');
    // neither the wildcard's parent nor two labels under it are its hosts: the host-less table
    assert.equal((await received('/docs/x', 'apps.localhost')).url, '/docs/x');
    assert.equal((await received('/docs/x', 'a.b.apps.localhost')).url, '/docs/x');
    await notFound('/x', 'a.b.apps.localhost');
  });

  it('routes other hosts, IPv6 literals and a request without Host as before: by path', async () => {
    assert.equal((await received('/docs/x', `127.0.0.1:${gateway.port}`)).url, '/docs/x');
    assert.equal((await received('/docs/x', '[::1]:8080')).url, '/docs/x');
    assert.equal((await received('/docs/x', undefined)).url, '/docs/x');
    assert.equal((await received('/docs/x', 'app.localhost..')).url, '/docs/x', 'two trailing dots name no service host');
  });

  it('never sends a request on a service host to a host-less service by path', async () => {
    assert.equal((await received('/docs/x', 'app.localhost')).url, '/app/docs/x', "the host's own root service");
    await notFound('/docs/x', 'paths.localhost');
    assert.equal((await received('/only/x', 'paths.localhost')).url, '/only/x');
    await notFound('/only/x', 'elsewhere.localhost');
  });

  it("gives the gateway's paths on a service host to the service, or 404", async () => {
    for (const path of ['/auth/login', '/api/services', '/dashboard', '/favicon.ico', '/.well-known/jwks.json', '/']) {
      assert.equal((await received(path, 'app.localhost')).url, `/app${path === '/' ? '/' : path}`, path);
      await notFound(path, 'paths.localhost');
    }
  });

  it("keeps the gateway's paths on PUBLIC_URL's host, which a service names", async () => {
    const handedOff = gateway.adminRequests.length;
    assert.equal((await get('/auth/login', 'gateway.localhost:8080')).status, 200);
    assert.equal((await get('/API/services', 'Gateway.Localhost')).status, 200);
    assert.deepEqual(gateway.adminRequests.slice(handedOff), ['/auth/login', '/API/services']);
    const jwks = await get('/.well-known/jwks.json', 'gateway.localhost:8080');
    assert.equal(jwks.status, 200);
    assert.ok(Array.isArray((JSON.parse(jwks.body) as { keys: unknown }).keys));
    // `/` has a service on that host, so it is the service's, as a service at `/` gets it
    assert.equal((await received('/', 'gateway.localhost:8080')).url, '/on-public/');
    assert.equal((await received('/docs/x', 'gateway.localhost:8080')).url, '/on-public/docs/x', 'not the host-less /docs');
  });

  it('never forwards the reserved prefix /.gatehouse/, in any spelling, on any host', async () => {
    const spellings = ['/.gatehouse/x', '/.gatehouse', '/.GATEHOUSE/x', '/%2Egatehouse/x', '/%2egatehouse/x', '//.gatehouse/x', '/\\.gatehouse/x', '/.gatehouse;p=1/x', '/.gatehouse%2Fx'];
    for (const path of spellings) {
      for (const host of ['app.localhost', 'a.apps.localhost', 'gateway.localhost:8080', `127.0.0.1:${gateway.port}`]) {
        await notFound(path, host);
      }
    }
    assert.equal((await received('/.gatehousex', 'app.localhost')).url, '/app/.gatehousex', 'a longer segment is no reserved path');
    // a service host's sign-in paths go to the admin plane, told the host; elsewhere they are nothing
    const handedOff = gateway.adminRequests.length;
    assert.equal((await get('/.gatehouse/callback?code=x', 'app.localhost')).status, 200);
    for (const host of ['gateway.localhost:8080', 'elsewhere.localhost', `127.0.0.1:${gateway.port}`]) await notFound('/.gatehouse/callback?code=x', host);
    await notFound('/.GATEHOUSE/callback?code=x', 'app.localhost');
    assert.deepEqual(gateway.adminRequests.slice(handedOff), ['/.gatehouse/callback?code=x']);
  });

  it('refuses two Host fields and an absolute-form target with 400', async () => {
    const forwarded = upstream.requests.length;
    assert.equal((await get('/x', 'app.localhost', ['Host: a.apps.localhost'])).status, 400);
    const absolute = await rawRequest(gateway.port, 'GET http://app.localhost/x HTTP/1.1\r\nHost: a.apps.localhost\r\nConnection: close\r\n\r\n');
    assert.equal(absolute.status, 400);
    const agreeing = await rawRequest(gateway.port, 'GET http://app.localhost/x HTTP/1.1\r\nHost: app.localhost\r\nConnection: close\r\n\r\n');
    assert.equal(agreeing.status, 400, 'absolute-form is refused outright (design.md §3.1)');
    assert.equal(upstream.requests.length, forwarded);
  });

  it("sends a host service the client's host as X-Forwarded-Host, with PUBLIC_URL's port, never the client's spelling", async () => {
    const spoof = ['X-Forwarded-Host: evil.example'];
    assert.deepEqual(headerValues(await received('/x', 'APP.localhost.:9999', spoof), 'x-forwarded-host'), ['app.localhost:8080']);
    assert.deepEqual(headerValues(await received('/x', 'Tenant-1.apps.localhost', spoof), 'x-forwarded-host'), ['tenant-1.apps.localhost:8080']);
    assert.deepEqual(headerValues(await received('/docs/x', 'evil.example', spoof), 'x-forwarded-host'), ['gateway.localhost:8080'], "a host-less service: PUBLIC_URL's");
    assert.deepEqual(headerValues(await received('/x', 'app.localhost'), 'x-forwarded-prefix'), [], 'a service at / has no prefix');
  });

  it("maps Location and Set-Cookie of a host service at / into that host's root", async () => {
    const response = await get('/x', 'redirect.localhost');
    assert.equal(response.status, 302);
    const fields = (name: string) => response.headers.filter(([key]) => key === name).map(([, value]) => value);
    assert.deepEqual(fields('location'), ['/next?q=1']);
    assert.deepEqual(fields('set-cookie'), ['scoped=1; Path=/', 'plain=2']);
  });

  it('answers a protected host service 401 without a session, forwards with one, and logs the request-target', async () => {
    const refused = await get('/private/x?q=1', 'app.localhost');
    assert.equal(refused.status, 401);
    assert.deepEqual(JSON.parse(refused.body), { error: 'Not authenticated' });
    const publicCookie = await gateway.signIn({ sub: 'host-user' });
    assert.equal((await get('/private/x?q=3', 'app.localhost', [`Cookie: ${publicCookie}`])).status, 401, "the sign-in origin's cookie is no session on a service host");
    const cookie = await gateway.signIn({ sub: 'host-user' }, { host: 'app.localhost' });
    const echoed = await received('/private/x?q=2', 'app.localhost', [`Cookie: ${cookie}`]);
    assert.equal(echoed.url, '/app-private/x?q=2');
    assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), ['host-user']);
    const refusedRecord = await gateway.waitForRecord((record) => record.path === '/private/x?q=1');
    assert.equal(refusedRecord.serviceId, privateService.id);
    assert.equal(refusedRecord.statusCode, 401);
    const record = await gateway.waitForRecord((entry) => entry.path === '/private/x?q=2');
    assert.equal(record.userId, 'host-user');
  });
});

describe('routing by host: the general rate limit', { timeout: 10_000 }, () => {
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;
  let hosted: ReturnType<typeof service>;

  before(async () => {
    upstream = await startEchoUpstream();
    hosted = service({ path: '/', targetUrl: upstream.origin, hosts: ['app.localhost'] });
    gateway = await startDataPlane({ env: { PUBLIC_URL, RATE_LIMIT_GENERAL: '2/1m' }, services: [hosted] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('counts a host service as any other, and summarises its refusals under that service', async () => {
    const send = () => rawRequest(gateway.port, 'GET /x HTTP/1.1\r\nHost: app.localhost\r\nConnection: close\r\n\r\n');
    assert.deepEqual([(await send()).status, (await send()).status, (await send()).status], [200, 200, 429]);
    assert.equal(upstream.requests.length, 2);
    await gateway.close(); // ships the minute's summary of refusals
    const summary = gateway.records.find((record) => record.statusCode === 429);
    assert.equal(summary?.serviceId, hosted.id);
  });
});
