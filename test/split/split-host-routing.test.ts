/**
 * Services on host names in split mode (issue 31, design.md §3.2): registered through the admin
 * process's API with `hosts`, published over Redis, routed by each of two proxy processes alike:
 * every spelling of `Host`, exact before wildcard, never to a host-less service by path, the
 * gateway's paths on a service host, `/.gatehouse/` never forwarded, `X-Forwarded-Host`, and a
 * protected host service's 401.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { rawRequest, type RawResponse } from '../support/raw-connection.js';
import { headerValues, type Echo } from '../support/upstream.js';

const env = useAdminSession({ topology: 'split', upstream: true }, async (env) => {
  const target = (base: string) => `${env.upstream.origin}${base}`;
  await env.createService({ name: 'App', path: '/', targetUrl: target('/app'), hosts: ['app.localhost'], requireAuth: false });
  await env.createService({ name: 'App private', path: '/private', targetUrl: target('/private'), hosts: ['app.localhost'], requireAuth: true });
  await env.createService({ name: 'Tenants', path: '/', targetUrl: target('/wild'), hosts: ['*.apps.localhost'], requireAuth: false });
  await env.createService({ name: 'Special', path: '/', targetUrl: target('/special'), hosts: ['special.apps.localhost'], requireAuth: false });
  await env.createService({ name: 'Docs', path: '/docs', targetUrl: target('/docs'), requireAuth: false });
  for (const proxy of env.split.proxies) {
    await eventually('every service on both proxies', async () => (await get(portOf(proxy.url), '/x', 'special.apps.localhost')).status === 200);
  }
});

function portOf(url: string): number {
  return Number(new URL(url).port);
}

/** `GET <target>` with `Host: <host>` on the proxy at `port`, and `lines` more. */
function get(port: number, target: string, host: string, lines: string[] = []): Promise<RawResponse> {
  return rawRequest(port, [`GET ${target} HTTP/1.1`, `Host: ${host}`, ...lines, 'Connection: close', '', ''].join('\r\n'));
}

/** What the echo upstream received through each proxy in turn; asserts both agree and answered 200. */
async function received(target: string, host: string, lines: string[] = []): Promise<Echo> {
  const echoes: Echo[] = [];
  for (const proxy of env.split.proxies) {
    const response = await get(portOf(proxy.url), target, host, lines);
    assert.equal(response.status, 200, `${proxy.url} ${host} ${target}: ${response.body}`);
    echoes.push(JSON.parse(response.body) as Echo);
  }
  assert.equal(echoes[0]!.url, echoes[1]!.url);
  return echoes[0]!;
}

/** The status each proxy answers `GET <target>` on `host` with, no request reaching the upstream. */
async function unforwarded(target: string, host: string, lines: string[] = []): Promise<number[]> {
  const forwarded = env.upstream.requests.length;
  const statuses: number[] = [];
  for (const proxy of env.split.proxies) statuses.push((await get(portOf(proxy.url), target, host, lines)).status);
  assert.equal(env.upstream.requests.length, forwarded, `${host} ${target} reached the upstream`);
  return statuses;
}

test('both proxies route every spelling of a service host, exact before wildcard, and other hosts by path', async () => {
  for (const host of ['app.localhost', 'APP.LOCALHOST', 'app.localhost.', 'app.localhost:8080']) {
    assert.equal((await received('/x', host)).url, '/app/x', host);
  }
  assert.equal((await received('/x', 'Tenant-7.apps.localhost')).url, '/wild/x');
  assert.equal((await received('/x', 'special.apps.localhost.')).url, '/special/x');
  assert.equal((await received('/docs/x', 'a.b.apps.localhost')).url, '/docs/x', 'two labels under the wildcard: no service host');
  assert.equal((await received('/docs/x', '[::1]')).url, '/docs/x');
  assert.equal((await received('/docs/x', 'app.localhost')).url, '/app/docs/x', "a service host's own services only");
  assert.equal((await received('/auth/login', 'app.localhost')).url, '/app/auth/login', "the gateway's paths are the service's there");
});

test('both proxies keep /.gatehouse/ in every spelling, refuse two Host fields and absolute-form, and answer 401 for a protected host service', async () => {
  for (const path of ['/.gatehouse/x', '/.GATEHOUSE/callback', '/%2Egatehouse/x', '//.gatehouse/x']) {
    assert.deepEqual(await unforwarded(path, 'app.localhost'), [404, 404], path);
  }
  // the hand-off's callback is the admin process's, told the host: a code it never made is refused
  assert.deepEqual(await unforwarded('/.gatehouse/callback?code=x', 'app.localhost'), [400, 400]);
  assert.deepEqual(await unforwarded('/x', 'app.localhost', ['Host: a.apps.localhost']), [400, 400]);
  for (const proxy of env.split.proxies) {
    const absolute = await rawRequest(portOf(proxy.url), 'GET http://app.localhost/x HTTP/1.1\r\nHost: a.apps.localhost\r\nConnection: close\r\n\r\n');
    assert.equal(absolute.status, 400);
  }
  assert.deepEqual(await unforwarded('/private/x', 'app.localhost'), [401, 401]);
  const onOrigin = await env.signIn({ sub: 'split-host-user', isAdmin: false });
  assert.deepEqual(await unforwarded('/private/x', 'app.localhost', [`Cookie: ${onOrigin.cookie}`]), [401, 401], "the sign-in origin's cookie is none on a service host");
  const user = await env.split.signIn({ sub: 'split-host-user', isAdmin: false }, { host: 'app.localhost' });
  const echoed = await received('/private/x', 'app.localhost', [`Cookie: ${user.cookie}`]);
  assert.equal(echoed.url, '/private/x');
  assert.deepEqual(headerValues(echoed, 'x-forwarded-user'), ['split-host-user']);
});

test("both proxies send a host service its host with PUBLIC_URL's port as X-Forwarded-Host", async () => {
  const publicPort = new URL(env.publicUrl).port;
  const echoed = await received('/x', 'App.Localhost.:1', ['X-Forwarded-Host: evil.example']);
  assert.deepEqual(headerValues(echoed, 'x-forwarded-host'), [`app.localhost:${publicPort}`]);
  const hostless = await received('/docs/x', 'evil.example');
  assert.deepEqual(headerValues(hostless, 'x-forwarded-host'), [new URL(env.publicUrl).host]);
});
