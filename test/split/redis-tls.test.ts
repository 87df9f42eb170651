/**
 * Redis over TLS (README "Running a fleet"): the split topology against a redis-server that speaks only TLS and
 * wants a password and a client certificate (REDIS_URL=rediss://…, REDIS_PASSWORD,
 * REDIS_TLS_CA_FILE, REDIS_TLS_CERT_FILE, REDIS_TLS_KEY_FILE). Every process connects; sessions,
 * the registry and revocations work across processes; the password is never in their output; a
 * client without the certificate gets nowhere.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { request } from 'undici';
import { RedisConnections } from '../../shared/backends/redis/connection/redis-connections.js';
import { useAdminSession } from '../support/admin-session.js';
import { eventually } from '../support/eventually.js';
import { startTlsRedis, type TlsRedis } from '../support/redis-tls.js';

let redis: TlsRedis;

const env = useAdminSession({
  topology: 'split',
  env: async () => {
    redis = await startTlsRedis();
    return {
      REDIS_URL: redis.url,
      REDIS_PASSWORD: redis.password,
      REDIS_TLS_CA_FILE: redis.files.ca,
      REDIS_TLS_CERT_FILE: redis.files.clientCert,
      REDIS_TLS_KEY_FILE: redis.files.clientKey,
    };
  },
  upstream: true,
  admin: false,
});
after(() => redis?.close());

const statusOn = async (base: string, path: string, cookie: string): Promise<number> => {
  const response = await request(`${base}${path}`, { headers: { cookie, accept: 'application/json' } });
  await response.body.dump();
  return response.statusCode;
};

test('over mutual TLS with a password: sessions, the registry and revocations reach every process', async () => {
  const admin = await env.split.signIn();
  await env.split.createService(admin, { name: 'App', path: '/app', targetUrl: env.upstream.origin, requireAuth: true });
  const user = await env.split.signIn({ sub: 'tls-user', isAdmin: false });
  await eventually('the service on both proxies', async () => (await Promise.all(env.split.proxies.map((p) => statusOn(p.url, '/app/x', user.cookie)))).every((s) => s === 200));
  const everywhere = await request(`${env.split.adminUrl}/api/users/tls-user/sessions`, { method: 'DELETE', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken } });
  assert.deepEqual(await everywhere.body.json(), { revoked: 1 });
  await eventually('the session ended on both proxies', async () => (await Promise.all(env.split.proxies.map((p) => statusOn(p.url, '/app/x', user.cookie)))).every((s) => s === 401), 1_000);
  for (const output of [env.split.admin.output(), ...env.split.proxies.map((p) => p.process.output())]) assert.ok(!output.includes(redis.password), 'the password is never logged');
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
