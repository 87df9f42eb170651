/**
 * `X-Forwarded-Host` is PUBLIC_URL's host, whatever `Host` a client typed: an upstream building a
 * password-reset link from it must never send users to the client's host. Both for a proxied
 * request and for the split-mode hand-off of gateway paths to the admin process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { echo, headerValues, startUpstream, type Echo, type Upstream } from '../support/upstream.js';
import { startHandedOffGateway } from '../support/handed-off-data-plane.js';
import { type TestDataPlane } from '../support/data-plane.js';

const PUBLIC_URL = 'https://gateway.example';

/** What reached the echo behind `gateway` for `GET <target>` sent with `Host: <host>`. */
async function receivedWithHost(gateway: TestDataPlane, target: string, host: string): Promise<Echo> {
  const lines = [`GET ${target} HTTP/1.1`, `Host: ${host}`, 'X-Client: 1', 'X-Forwarded-Host: spoofed.example', 'Connection: close'];
  const response = await rawRequest(gateway.port, `${lines.join('\r\n')}\r\n\r\n`);
  assert.equal(response.status, 200, response.body);
  return JSON.parse(response.body) as Echo;
}

describe('X-Forwarded-Host', { timeout: 10_000 }, () => {
  let upstream: Upstream;
  /** Stands in for the admin process at ADMIN_INTERNAL_URL: it shows what the hand-off sent. */
  let adminProcess: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    adminProcess = await startUpstream(echo);
    gateway = await startHandedOffGateway(adminProcess, { PUBLIC_URL }, [service({ path: '/app', targetUrl: upstream.origin })]);
  });
  after(async () => {
    await gateway.close();
    await adminProcess.close();
    await upstream.close();
  });

  it("is PUBLIC_URL's host for a proxied request, never the client's Host", async () => {
    for (const host of ['evil.example', 'gateway.example.evil.example', 'gateway.example:8443', 'GATEWAY.example']) {
      const received = await receivedWithHost(gateway, '/app/reset-password', host);
      assert.deepEqual(headerValues(received, 'x-forwarded-host'), ['gateway.example'], host);
    }
  });

  it("is PUBLIC_URL's host on the hand-off to the admin process, sent before the client's fields", async () => {
    const received = await receivedWithHost(gateway, '/auth/login', 'evil.example');
    assert.equal(received.url, '/auth/login', 'the hand-off served it');
    assert.deepEqual(headerValues(received, 'x-forwarded-host'), ['gateway.example']);
    const names = received.headers.map(([name]) => name.toLowerCase());
    for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host']) {
      const at = names.indexOf(name);
      assert.ok(at !== -1 && at < names.indexOf('x-client'), names.join(', '));
    }
  });
});
