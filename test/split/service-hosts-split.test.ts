/**
 * Services on host names in split mode (issue 31): the registry the admin process publishes over
 * Redis carries each service's hosts to both proxy processes, and a change of them too. (How the
 * data plane routes by host is tested in test/proxy/host-routing.test.ts.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { rawRequest, type RawResponse } from '../support/raw-connection.js';

const env = useAdminSession({ topology: 'split', upstream: true });

/** `GET <target>` with `Host: <host>` on the public listener of the proxy at `url`. */
function get(url: string, target: string, host: string): Promise<RawResponse> {
  return rawRequest(Number(new URL(url).port), [`GET ${target} HTTP/1.1`, `Host: ${host}`, 'Connection: close', '', ''].join('\r\n'));
}

/** True when the proxy at `url` forwards `target` on `host` to the echo upstream under `/hosted`. */
async function reaches(url: string, target: string, host: string): Promise<boolean> {
  const response = await get(url, target, host);
  return response.status === 200 && /"url": ?"\/hosted\/page"/.test(response.body);
}

describe('hosts in split mode', { timeout: 60_000 }, () => {
  it('both proxies route a service on its hosts only, and follow when its hosts are removed', async () => {
    const id = await env.createService({
      name: 'Hosted',
      path: '/split-hosted',
      targetUrl: `${env.upstream.origin}/hosted`,
      requireAuth: false,
      hosts: ['split-app.localhost', '*.split.localhost'],
    });
    const proxies = env.split.proxies.map((proxy) => proxy.url);
    for (const url of proxies) {
      await eventually(`${url} to route split-app.localhost`, () => reaches(url, '/split-hosted/page', 'Split-App.localhost.'));
      assert.ok(await reaches(url, '/split-hosted/page', 'any.split.localhost:8080'), 'the wildcard reached');
      assert.equal((await get(url, '/split-hosted/page', '127.0.0.1')).status, 404, 'not on a host it does not name');
    }
    const cleared = await env.call('PUT', `/api/services/${id}`, { as: env.admin, json: { hosts: [] } });
    assert.equal(cleared.status, 200, cleared.text);
    for (const url of proxies) {
      await eventually(`${url} to route /split-hosted on any host`, () => reaches(url, '/split-hosted/page', '127.0.0.1'));
    }
  });
});
