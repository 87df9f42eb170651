/**
 * Redis over TLS (issue 22): the split topology against a redis-server that speaks only TLS and
 * wants a password and a client certificate (REDIS_URL=rediss://…, REDIS_PASSWORD,
 * REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE). Every process connects; sessions,
 * the registry and revocations work across processes; the password is never in their output; a
 * client without the certificate gets nowhere.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { eventually } from '../support/eventually.js';
import { startTlsRedis, type TlsRedis } from '../support/redis-tls.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let redis: TlsRedis;
let split: SplitGateway;
let upstream: EchoUpstream;

before(async () => {
  upstream = await startEchoUpstream();
  redis = await startTlsRedis();
  split = await startSplitGateway({
    REDIS_URL: redis.url,
    REDIS_PASSWORD: redis.password,
    REDIS_TLS_CA_FILE: redis.files.ca,
    REDIS_TLS_CERT_FILE: redis.files.clientCert,
    REDIS_TLS_KEY_FILE: redis.files.clientKey,
  });
});
after(async () => {
  await split?.close();
  await redis?.close();
  await upstream?.close();
});

const statusOn = async (base: string, path: string, cookie: string): Promise<number> => {
  const response = await request(`${base}${path}`, { headers: { cookie, accept: 'application/json' } });
  await response.body.dump();
  return response.statusCode;
};

test('over mutual TLS with a password: sessions, the registry and revocations reach every process', async () => {
  const admin = await split.signIn();
  await split.createService(admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
  const user = await split.signIn({ sub: 'tls-user', isAdmin: false });
  await eventually('the service on both proxies', async () => (await Promise.all(split.proxies.map((p) => statusOn(p.url, '/app/x', user.cookie)))).every((s) => s === 200));
  const everywhere = await request(`${split.adminUrl}/api/users/tls-user/sessions`, { method: 'DELETE', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken } });
  assert.deepEqual(await everywhere.body.json(), { revoked: 1 });
  await eventually('the session ended on both proxies', async () => (await Promise.all(split.proxies.map((p) => statusOn(p.url, '/app/x', user.cookie)))).every((s) => s === 401), 1_000);
  for (const output of [split.admin.output(), ...split.proxies.map((p) => p.process.output())]) assert.ok(!output.includes(redis.password), 'the password is never logged');
});

test('with the CA but without the client certificate, Redis refuses the handshake: never ready', async () => {
  const target = { kind: 'single' as const, url: redis.url, username: undefined, password: redis.password, tls: { ca: readFileSync(redis.files.ca), cert: undefined, key: undefined } };
  const connections = new RedisConnections(target, { connectTimeoutMs: 500 });
  try {
    await assert.rejects(connections.ready(1_500), /not ready within/);
  } finally {
    await connections.close();
  }
});
