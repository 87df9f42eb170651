/**
 * Certificates by ACME in split mode (README "Certificates by ACME"): the admin process orders,
 * the TLS-ALPN-01 challenges travel over Redis and whichever of two proxy processes pebble reaches
 * answers them (pebble's tlsPort is a relay pointed at one proxy, then the other); every proxy,
 * one started later too, serves each certificate, fetched from the admin process, and Redis never
 * holds a private key of one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { request } from 'undici';
import { eventually } from '../support/eventually.js';
import { pebbleMissing, startPebble, type Pebble } from '../support/pebble.js';
import { startSplitGateway, type ProxyProcess, type SplitGateway } from '../support/split-gateway.js';
import { startSwitchableRelay, type SwitchableRelay } from '../support/switchable-relay.js';
import { handshake, peerOf } from '../support/tls-client.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let pebble: Pebble;
let relay: SwitchableRelay;
let split: SplitGateway;
let admin: { cookie: string; csrfToken: string };
let echo: EchoUpstream;

const portOf = (proxy: ProxyProcess) => Number(new URL(proxy.url).port);

/** Waits until `proxy` serves `name` a certificate that chains to pebble's root. */
async function servedByAcme(proxy: ProxyProcess, name: string): Promise<void> {
  await eventually(`${proxy.url} to serve a certificate by ACME for ${name}\n${split.admin.output().slice(-2_000)}`, async () => {
    const socket = await handshake(portOf(proxy), Buffer.from(await pebble.roots()), name, { rejectUnauthorized: true });
    const { names } = peerOf(socket);
    socket.destroy();
    return names === `DNS:${name}`;
  }, 30_000, 200);
}

describe('certificates by ACME, split mode, TLS-ALPN-01 over Redis', { skip: pebbleMissing, timeout: 240_000 }, () => {
  before(async () => {
    relay = await startSwitchableRelay();
    // No HTTP_PORT: the admin process prefers TLS-ALPN-01, which pebble validates on the relay.
    pebble = await startPebble({ httpPort: 9, tlsPort: relay.port });
    echo = await startEchoUpstream();
    split = await startSplitGateway({
      // `localhost` is no name a CA validates: its listeners serve a stand-in, and only service hosts are ordered.
      PUBLIC_URL: 'https://localhost:8443',
      ACME_EMAIL: 'ops@example.com',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      LOG_LEVEL: 'info',
    });
    admin = await split.signIn();
  });

  after(async () => {
    await split?.close();
    await echo?.close();
    await pebble?.close();
    await relay?.close();
  });

  test('the proxy process the CA reaches answers the challenge, whichever it is, and every proxy serves the certificate', async () => {
    const [first, second] = split.proxies;
    for (const [index, proxy] of [first, second].entries()) {
      relay.point(portOf(proxy));
      const host = `app${index}.localhost`;
      await split.createService(admin, { name: `App ${index}`, path: '/', hosts: [host], targetUrl: echo.origin, requireAuth: false });
      for (const serving of [first, second]) await servedByAcme(serving, host);
      assert.ok(relay.relayedTo(portOf(proxy)) > 0, `pebble validated ${host} through ${proxy.url}`);
    }
  });

  test('a proxy process started later serves the certificates at once', async () => {
    const late = await split.startProxy();
    try {
      for (const host of ['app0.localhost', 'app1.localhost']) await servedByAcme(late, host);
    } finally {
      await late.process.stop();
    }
  });

  test('Redis never holds a private key of a certificate; the admin port gives the pairs only for the fetch token', async () => {
    const redis = new Redis(split.redis.url);
    try {
      const keys = await redis.keys('gatehouse:*');
      for (const key of keys) {
        if ((await redis.type(key)) !== 'string') continue;
        assert.doesNotMatch((await redis.get(key)) ?? '', /PRIVATE KEY/, key);
      }
      const notice = JSON.parse((await redis.get('gatehouse:{certificates}'))!) as { notice: { certificates: Array<{ host: string; fingerprint: string | null }> } };
      assert.deepEqual(notice.notice.certificates.map((entry) => entry.host).sort(), ['app0.localhost', 'app1.localhost']);
      assert.ok(notice.notice.certificates.every((entry) => /^[0-9a-f]{64}$/.test(entry.fingerprint ?? '')));
    } finally {
      redis.disconnect();
    }
    for (const authorization of [undefined, 'Bearer not-the-token']) {
      const response = await request(`${split.adminUrl}/internal/certificates`, { headers: authorization ? { authorization } : {} });
      assert.equal(response.statusCode, 401);
      assert.doesNotMatch(await response.body.text(), /PRIVATE KEY/);
    }
  });
});
