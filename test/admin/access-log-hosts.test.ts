/**
 * The service host on access-log records (design.md §3.2, §3.9, §4.11), through the running
 * gateway in embedded and in split mode: requests sent on a service host in any spelling of it
 * (case, a trailing dot, a port), on a wildcard's host and on a host no service names are proxied,
 * stored (in split mode through the Redis stream, from both proxies) and read back by
 * `GET /api/services/:id/logs` with the host they were routed by, or null; the `host` filter in any
 * spelling and its 400; every answer checked against the OpenAPI document; and the console's log
 * table showing the host before the path, with a Host filter for a service on hosts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { apiClient } from '../support/api-client.js';
import { useAdminSession, type EmbeddedAdminSession, type SplitAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { checkedApiClient, OpenApiChecker } from '../support/openapi-checker.js';
import { rawRequest } from '../support/raw-connection.js';

const DOCS = '/host-log-docs';

/** A service's record as the API lists it (the fields this test reads). */
interface Logged {
  path: string;
  host: string | null;
  status_code: number;
}

/** The ids of the services {@link checkHostRecords} registers. */
interface Services {
  app: string;
  tenants: string;
  docs: string;
}

/**
 * The checks against a gateway `useAdminSession` starts; `proxies` gives the ports of the
 * listeners that proxy (the public one embedded, both proxy processes split).
 */
function checkHostRecords(env: EmbeddedAdminSession | SplitAdminSession, proxies: () => number[]): void {
  let call: ReturnType<typeof checkedApiClient>;
  let ids: Services;

  /** `GET <target>` with `Host: <host>` on the listener at `port`; its status. */
  const get = async (port: number, target: string, host: string) =>
    (await rawRequest(port, [`GET ${target} HTTP/1.1`, `Host: ${host}`, 'Connection: close', '', ''].join('\r\n'))).status;

  /** The service's records, newest first, once `count` are stored. */
  const stored = async (id: string, count: number, query = ''): Promise<Logged[]> => {
    await eventually(`${count} records of ${id}`, async () => (await call('GET', `/api/services/${id}/logs${query}`, { as: env.admin })).json.total >= count, 20_000);
    const page = await call('GET', `/api/services/${id}/logs${query}`, { as: env.admin });
    assert.equal(page.status, 200, page.text);
    return page.json.logs as Logged[];
  };

  it('logs each request with the host it was routed by, in any spelling of it, and null on a host no service names', async () => {
    const served = await apiClient(env.apiUrl)('GET', '/api/openapi.json');
    call = checkedApiClient(env.apiUrl, new OpenApiChecker(served.json));
    ids = {
      app: await env.createService({ name: 'Host app', path: '/', targetUrl: env.upstream.origin, hosts: ['app.localhost'], requireAuth: false }),
      tenants: await env.createService({ name: 'Host tenants', path: '/', targetUrl: env.upstream.origin, hosts: ['*.apps.localhost'], requireAuth: false }),
      docs: await env.createService({ name: 'Host-less docs', path: DOCS, targetUrl: env.upstream.origin, requireAuth: false }),
    };
    const ports = proxies();
    // The last service created is there once all are (a registry snapshot is whole); one record each.
    for (const port of ports) {
      await eventually('the services on every proxy', async () => (await get(port, `${DOCS}/ready`, 'ready.localhost')) === 200);
    }
    for (const [i, port] of ports.entries()) {
      assert.equal(await get(port, `/a/${i}`, 'APP.Localhost.:8080'), 200);
      assert.equal(await get(port, `/b/${i}`, 'Tenant-7.apps.localhost'), 200);
      assert.equal(await get(port, `${DOCS}/c/${i}`, 'elsewhere.localhost'), 200);
    }
    const app = await stored(ids.app, ports.length);
    assert.deepEqual(app.map((log) => [log.path, log.host]).sort(), ports.map((_, i) => [`/a/${i}`, 'app.localhost']));
    const tenants = await stored(ids.tenants, ports.length);
    assert.deepEqual(tenants.map((log) => [log.path, log.host]).sort(), ports.map((_, i) => [`/b/${i}`, 'tenant-7.apps.localhost']));
    const docs = (await stored(ids.docs, 2 * ports.length)).filter((log) => log.path.startsWith(`${DOCS}/c/`));
    assert.deepEqual(docs.map((log) => [log.path, log.host]).sort(), ports.map((_, i) => [`${DOCS}/c/${i}`, null]));
  });

  it('filters by host in any spelling; a host that is no name is 400 naming the parameter', async () => {
    const ports = proxies();
    await get(ports[0]!, '/other', 'Other-1.apps.localhost');
    const all = await stored(ids.tenants, ports.length + 1);
    assert.ok(all.some((log) => log.host === 'other-1.apps.localhost'));
    const one = await call('GET', `/api/services/${ids.tenants}/logs?host=${encodeURIComponent('TENANT-7.apps.localhost.')}`, { as: env.admin });
    assert.equal(one.json.total, ports.length);
    assert.deepEqual(one.json.logs.map((log: Logged) => [log.path, log.host]).sort(), ports.map((_, i) => [`/b/${i}`, 'tenant-7.apps.localhost']));
    const none = await call('GET', `/api/services/${ids.docs}/logs?host=app.localhost`, { as: env.admin });
    assert.deepEqual([none.status, none.json.total, none.json.logs], [200, 0, []], 'a host-less service has no record on a host');
    const wrong = await call('GET', `/api/services/${ids.app}/logs?host=app.localhost:8080`, { as: env.admin });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.json, {
      error: 'host must be a host name, such as app.example.com (no port, no wildcard)',
      fields: { host: 'must be a host name, such as app.example.com (no port, no wildcard)' },
    });
  });

  it("shows the host before the path in the console's log table, and a Host filter on a service page with hosts", async () => {
    const page = await env.call('GET', `/dashboard/services/${ids.app}`, { as: env.admin });
    assert.equal(page.status, 200, page.text);
    assert.ok(page.text.includes('<code class="muted" title="The service host the request was routed by">app.localhost</code><code>/a/0</code>'), 'host, then path');
    assert.match(page.text, /<label for="f-host">Host<\/label>/);
    assert.ok(page.text.includes('<datalist id="log-hosts"><option value="app.localhost"></datalist>'), 'its host offered');
    const docs = await env.call('GET', `/dashboard/services/${ids.docs}`, { as: env.admin });
    assert.ok(docs.text.includes(`<td data-label="Path" class="wrap"><code>${DOCS}/c/0</code></td>`), 'no host for a host-less service');
    assert.doesNotMatch(docs.text, /f-host/, 'nor a Host filter');
  });
}

describe('access-log hosts, embedded', () => {
  const env = useAdminSession({ upstream: true });
  checkHostRecords(env, () => [Number(new URL(env.publicUrl).port)]);
});

describe('access-log hosts, split', () => {
  const env = useAdminSession({ topology: 'split', upstream: true });
  checkHostRecords(env, () => env.split.proxies.map((proxy) => Number(new URL(proxy.url).port)));
});
