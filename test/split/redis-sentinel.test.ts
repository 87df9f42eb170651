/**
 * Redis as production runs it (README "Running a fleet"): the split topology over Redis Sentinel (a primary, two
 * replicas, three Sentinels on loopback). The primary is killed, then the new one is frozen
 * (SIGSTOP: a host gone silent): Sentinel promotes a replica each time, and
 * the admin process and both proxies find the new primary by themselves; protected requests
 * answer 200 again, a registry change and a session's end still reach both proxies within a
 * second, and no request hangs. Figures are printed.
 */
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { boundedStatus } from '../support/bounded-request.js';
import { eventually } from '../support/eventually.js';
import { startSentinelGroup, SENTINEL_GROUP, type SentinelGroup } from '../support/redis-sentinel.js';

let group: SentinelGroup;

const env = useAdminSession(
  {
    topology: 'split',
    env: async () => {
      group = await startSentinelGroup(2, 3);
      return { REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_NAME: SENTINEL_GROUP };
    },
    upstream: true,
  },
  async (env) => {
    await env.split.createService(env.admin, { name: 'App', path: '/app', targetUrl: env.upstream.origin, requireAuth: true });
  },
);
after(() => group?.close());

/** Statuses of a GET through each proxy; none waits over 2 s (no request may hang longer). */
const onBoth = (path: string, cookie: string) => Promise.all(env.split.proxies.map((proxy) => boundedStatus(`${proxy.url}${path}`, cookie)));

/**
 * Takes the primary away (`how`), waits for both proxies to answer 200 again on a new primary,
 * then checks that a registry change and a revocation still reach both; prints the figures.
 */
async function failOver(t: { diagnostic(message: string): void }, how: 'killed' | 'frozen', name: string): Promise<void> {
  const user = await env.split.signIn({ sub: `${name}-user`, isAdmin: false, email: `${name}@example.com`, name });
  assert.deepEqual(await onBoth('/app/x', user.cookie), [200, 200]);
  const before = await group.primaryPort();
  const primary = [group.primary, ...group.replicas].find((server) => server.port === before)!;

  const cutAt = Date.now();
  if (how === 'killed') await primary.kill();
  else primary.pause();
  const answers: Array<number | string> = [];
  await eventually('200 on both proxies after the failover', async () => {
    const statuses = await onBoth('/app/x', user.cookie);
    answers.push(...statuses);
    return statuses.every((status) => status === 200) && (await group.primaryPort()) !== before;
  }, 30_000, 100);
  const recoveredMs = Date.now() - cutAt;

  // Writes go to the new primary (once the admin process has left the old one: at once when it
  // was killed, within a few seconds when it went silent), and its pub/sub reaches both proxies.
  let service: string | undefined;
  const writableMs = await eventually('the admin process to take a registry change', async () => {
    const created = await request(`${env.split.adminUrl}/api/services${service ? `/${service}` : ''}`, {
      method: service ? 'PUT' : 'POST',
      headers: { cookie: env.admin.cookie, 'x-csrf-token': env.admin.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `After ${how}`, path: `/after-${how}`, targetUrl: env.upstream.origin, requireAuth: false }),
    });
    const body = (await created.body.json()) as { id?: string };
    // A write the registry kept while its publication failed (500) is published on reconnect.
    service ??= created.statusCode === 201 ? body.id : (await serviceAt(`/after-${how}`));
    return created.statusCode === 201 || created.statusCode === 200;
  }, 10_000, 100);
  const registryMs = await eventually('the new service on both proxies', async () => (await onBoth(`/after-${how}/x`, '')).every((status) => status === 200), 5_000, 20);
  const listed = await request(`${env.split.adminUrl}/api/sessions?user=${name}-user`, { headers: { cookie: env.admin.cookie } });
  const listing = (await listed.body.json()) as { sessions: Array<{ id: string }> };
  assert.equal(listed.statusCode, 200, JSON.stringify(listing));
  const [session] = listing.sessions;
  const revoked = await request(`${env.split.adminUrl}/api/sessions/${session!.id}`, { method: 'DELETE', headers: { cookie: env.admin.cookie, 'x-csrf-token': env.admin.csrfToken } });
  assert.equal(revoked.statusCode, 204);
  const revokedMs = await eventually('the session ended on both proxies', async () => (await onBoth('/app/x', user.cookie)).every((status) => status === 401), 5_000, 20);

  const kinds = [...new Set(answers.map(String))].sort();
  t.diagnostic(`failover: 200 on both proxies ${recoveredMs} ms after the primary was ${how}; answers meanwhile: ${kinds.join(', ')}; the admin took a write after ${writableMs} ms more, a registry change reached both in ${registryMs} ms, a revocation in ${revokedMs} ms`);
  assert.ok(recoveredMs < 15_000, `${recoveredMs} ms`);
  assert.ok(registryMs <= 1_000 && revokedMs <= 1_000);
  // Failing closed while there is no primary (503), never hanging and never a 500.
  assert.ok(answers.every((status) => status === 200 || status === 503), kinds.join(', '));
}

/** The id of the service at `path`, if the registry has one. */
async function serviceAt(path: string): Promise<string | undefined> {
  const listed = await request(`${env.split.adminUrl}/api/services`, { headers: { cookie: env.admin.cookie } });
  return ((await listed.body.json()) as Array<{ id: string; path: string }>).find((service) => service.path === path)?.id;
}

test('the primary killed: Sentinel fails over, every process carries on against the new primary', (t) => failOver(t, 'killed', 'killed'));

test('the new primary frozen (its host silent: no FIN, no RST): every process leaves it for the next one', async (t) => {
  await failOver(t, 'frozen', 'frozen');
  // Thawed, the old primary is a replica now: it does not take the group back.
  [group.primary, ...group.replicas].forEach((server) => server.resume());
});
