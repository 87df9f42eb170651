/**
 * Certificates by ACME on a proxy of cluster workers (PROXY_WORKERS=2; README "Certificates by
 * ACME"), against pebble with validation on: each worker follows the admin process's certificates
 * and the challenges over Redis itself, so the TLS-ALPN-01 validations the primary deals to either
 * worker are answered, and every handshake gets the certificate by ACME whichever worker serves
 * it (told by the process that holds the connection).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { apiClient } from '../support/api-client.js';
import { connectionOwners } from '../support/connection-owner.js';
import { eventually } from '../support/eventually.js';
import { childPids } from '../support/gatehouse-process.js';
import { pebbleMissing, startPebble, type Pebble } from '../support/pebble.js';
import { startSplitGateway, type ProxyProcess, type SplitGateway } from '../support/split-gateway.js';
import { startSwitchableRelay, type SwitchableRelay } from '../support/switchable-relay.js';
import { handshake, peerOf } from '../support/tls-client.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

const HOSTS = ['app0.localhost', 'app1.localhost', 'app2.localhost', 'app3.localhost'];

let pebble: Pebble;
let relay: SwitchableRelay;
let split: SplitGateway;
let cluster: ProxyProcess;
let clusterPort: number;
let admin: { cookie: string; csrfToken: string };
let echo: EchoUpstream;

/** A handshake with the cluster for `name`, verified against pebble's current root; rejects while the certificate is not one pebble issued. */
async function trustedHandshake(name: string) {
  return handshake(clusterPort, Buffer.from(await pebble.roots()), name, { rejectUnauthorized: true });
}

describe('certificates by ACME on a cluster of proxy workers', { skip: pebbleMissing, timeout: 240_000 }, () => {
  before(async () => {
    relay = await startSwitchableRelay();
    // No HTTP_PORT: the admin process prefers TLS-ALPN-01, which pebble validates on the relay.
    pebble = await startPebble({ httpPort: 9, tlsPort: relay.port });
    echo = await startEchoUpstream();
    split = await startSplitGateway({
      PUBLIC_URL: 'https://localhost:8443',
      ACME_EMAIL: 'ops@example.com',
      ACME_DIRECTORY_URL: pebble.directoryUrl,
      ACME_CA_FILE: pebble.caFile,
      LOG_LEVEL: 'info',
    });
    cluster = await split.startProxy({ PROXY_WORKERS: '2' });
    clusterPort = Number(new URL(cluster.url).port);
    relay.point(clusterPort);
    admin = await split.signIn();
  });

  after(async () => {
    await cluster?.process.stop();
    await split?.close();
    await echo?.close();
    await pebble?.close();
    await relay?.close();
  });

  test('the challenges the CA brings to either worker are answered: every order succeeds', async () => {
    for (const [index, host] of HOSTS.entries()) {
      await split.createService(admin, { name: `App ${index}`, path: '/', hosts: [host], targetUrl: echo.origin, requireAuth: false });
    }
    // Nothing but pebble's validations connects to the cluster meanwhile; its primary hands
    // connections to the workers in turn, so two validations or more reached both.
    await eventually(`every host's certificate issued\n${split.admin.output().slice(-2_000)}`, async () => {
      const answer = await apiClient(split.adminUrl)('GET', '/api/certificates', { as: admin });
      const statuses = (answer.json as Array<{ host: string; status: string }>).filter((entry) => HOSTS.includes(entry.host));
      return statuses.length === HOSTS.length && statuses.every((entry) => entry.status === 'valid');
    }, 60_000, 250);
    assert.ok(relay.relayedTo(clusterPort) >= HOSTS.length, `pebble validated ${relay.relayedTo(clusterPort)} times through the cluster`);
    const metrics = await (await request(`${split.adminUrl}/metrics`)).body.text();
    assert.match(metrics, /gatehouse_acme_orders_total\{outcome="failed"\} 0\b/);
    assert.match(metrics, new RegExp(`gatehouse_acme_orders_total\\{outcome="issued"\\} ${HOSTS.length}\\b`));
  });

  test('every handshake gets the certificate by ACME, whichever worker serves it', async () => {
    const workers = childPids(cluster.process.child.pid!);
    assert.equal(workers.length, 2);
    // Each worker fetches the certificates from the admin process on its own notice.
    await eventually('both workers to serve the certificates', async () => {
      for (const host of [...HOSTS, ...HOSTS]) (await trustedHandshake(host)).destroy();
      return true;
    }, 30_000, 250);
    const servedBy = new Set<number>();
    for (const host of [...HOSTS, ...HOSTS]) {
      const socket = await trustedHandshake(host);
      assert.equal(peerOf(socket).names, `DNS:${host}`);
      const owners = connectionOwners(clusterPort, socket.localPort!).filter((pid) => workers.includes(pid));
      assert.equal(owners.length, 1, `one worker holds the connection for ${host}`);
      servedBy.add(owners[0]!);
      socket.destroy();
    }
    assert.deepEqual([...servedBy].sort(), [...workers].sort(), 'both workers served handshakes');
  });
});
