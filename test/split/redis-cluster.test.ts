/**
 * Redis as production runs it (README "Running a fleet"): the split topology over a Redis Cluster (three
 * primaries, a replica each, on loopback). The primary serving the sessions' slot is killed: its
 * replica takes over, and the admin process and both proxies follow the new slot map by themselves;
 * protected requests answer 200 again, never a `MOVED` or `READONLY` error (only 200 or 503 while
 * there is no primary), a registry change and a session's end still reach both proxies within a
 * second, and every response the clients received is in the access log once. Figures are printed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { sessionRedisKey } from '../../shared/backends/redis/redis-keys.js';
import { useAdminSession } from '../support/admin-session.js';
import { apiClient } from '../support/api-client.js';
import { boundedStatus } from '../support/bounded-request.js';
import { eventually } from '../support/eventually.js';
import { startRedisCluster, type RedisClusterServers } from '../support/redis-cluster.js';

let cluster: RedisClusterServers;
let serviceId: string;

const env = useAdminSession(
  {
    topology: 'split',
    env: async () => {
      cluster = await startRedisCluster(3, 1);
      return { REDIS_CLUSTER_NODES: cluster.seeds };
    },
    upstream: true,
  },
  async (env) => {
    serviceId = await env.split.createService(env.admin, { name: 'App', path: '/app', targetUrl: env.upstream.origin, requireAuth: true });
  },
);
after(() => cluster?.close());

const onBoth = (path: string, cookie: string) => Promise.all(env.split.proxies.map((proxy) => boundedStatus(`${proxy.url}${path}`, cookie)));

/** The admin process's API as the signed-in admin. */
const adminCall = (method: string, path: string, json?: unknown) => apiClient(env.split.adminUrl)(method, path, { as: env.admin, ...(json === undefined ? {} : { json }) });

/** Paths of the service's stored access-log records. */
async function loggedPaths(): Promise<string[]> {
  const { json } = await adminCall('GET', `/api/services/${serviceId}/logs?limit=1000`);
  return (json as { logs: Array<{ path: string }> }).logs.map((log) => log.path);
}

test('keys written together share a slot, so one MULTI or script serves them on a cluster', async () => {
  // The sessions live with their indexes on one primary.
  const sessions = await cluster.primaryOf(sessionRedisKey('x'));
  assert.equal((await cluster.primaryOf('gatehouse:{sessions}')).port, sessions.port);
});

test('the sessions\' primary killed: its replica takes over, every process follows the new slot map', async (t) => {
  const user = await env.split.signIn({ sub: 'cluster-user', isAdmin: false, email: 'cluster@example.com', name: 'Clu' });
  assert.deepEqual(await onBoth('/app/before', user.cookie), [200, 200]);
  const victim = await cluster.primaryOf(sessionRedisKey('x'));

  const killedAt = Date.now();
  await victim.kill();
  const answers: Array<number | string> = [];
  const received: string[] = ['/app/before', '/app/before'];
  let probe = 0;
  await eventually('200 on both proxies after the failover', async () => {
    const paths = env.split.proxies.map((_, n) => `/app/during-${probe}-${n}`);
    probe++;
    const statuses = await Promise.all(env.split.proxies.map((proxy, n) => boundedStatus(`${proxy.url}${paths[n]}`, user.cookie)));
    answers.push(...statuses);
    statuses.forEach((status, n) => typeof status === 'number' && received.push(paths[n]!));
    return statuses.every((status) => status === 200) && (await cluster.primaryOf(sessionRedisKey('x'))).port !== victim.port;
  }, 30_000, 100).catch((error: Error) => {
    throw new Error(`${error.message}; answers: ${answers.slice(-6).join(', ')}\n${env.split.proxies[0].process.output().slice(-2000)}\n${env.split.admin.output().slice(-2000)}`);
  });
  const recoveredMs = Date.now() - killedAt;

  const created = await adminCall('POST', '/api/services', { name: 'After', path: '/after', targetUrl: env.upstream.origin, requireAuth: false });
  assert.equal(created.status, 201, JSON.stringify(created.json));
  const registryMs = await eventually('the new service on both proxies', async () => (await onBoth('/after/x', '')).every((status) => status === 200), 5_000, 20);
  const listing = await adminCall('GET', '/api/sessions?user=cluster-user');
  assert.equal(listing.status, 200, JSON.stringify(listing.json));
  const [session] = (listing.json as { sessions: Array<{ id: string }> }).sessions;
  assert.equal((await adminCall('DELETE', `/api/sessions/${session!.id}`)).status, 204);
  const revokedMs = await eventually('the session ended on both proxies', async () => (await onBoth('/app/x', user.cookie)).every((status) => status === 401), 5_000, 20);

  // Every response a client received is in the access log, once.
  const wanted = received.sort().join('\n');
  await eventually('every answered request in the access log', async () => (await loggedPaths()).filter((path) => received.includes(path)).sort().join('\n') === wanted, 10_000, 100);

  const kinds = [...new Set(answers.map(String))].sort();
  t.diagnostic(`cluster failover: 200 on both proxies ${recoveredMs} ms after the sessions' primary was killed; answers meanwhile: ${kinds.join(', ')}; a registry change reached both in ${registryMs} ms, a revocation in ${revokedMs} ms`);
  assert.ok(recoveredMs < 15_000, `${recoveredMs} ms`);
  assert.ok(registryMs <= 1_000 && revokedMs <= 1_000, `${registryMs} ms, ${revokedMs} ms`);
  assert.ok(answers.every((status) => status === 200 || status === 503), kinds.join(', '));
});
