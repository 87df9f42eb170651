/**
 * Redis as production runs it (issue 22): the split topology over Redis Sentinel (a primary, a
 * replica, two Sentinels on loopback). The primary is killed: Sentinel promotes the replica, and
 * the admin process and both proxies find the new primary by themselves; protected requests
 * answer 200 again, a registry change and a session's end still reach both proxies within a
 * second, and no request hangs. Figures are printed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { boundedStatus } from '../support/bounded-request.js';
import { eventually } from '../support/eventually.js';
import { startSentinelGroup, SENTINEL_GROUP, type SentinelGroup } from '../support/redis-sentinel.js';
import { startSplitGateway, type SplitGateway } from '../support/split-gateway.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let group: SentinelGroup;
let split: SplitGateway;
let upstream: EchoUpstream;
let admin: { cookie: string; csrfToken: string };

before(async () => {
  upstream = await startEchoUpstream();
  group = await startSentinelGroup();
  split = await startSplitGateway({ REDIS_SENTINELS: group.sentinels, REDIS_SENTINEL_NAME: SENTINEL_GROUP });
  admin = await split.signIn();
  await split.createService(admin, { name: 'App', path: '/app', targetUrl: upstream.origin, requireAuth: true });
});
after(async () => {
  await split?.close();
  await group?.close();
  await upstream?.close();
});

/** Statuses of a GET through each proxy; none waits over 2 s (no request may hang longer). */
const onBoth = (path: string, cookie: string) => Promise.all(split.proxies.map((proxy) => boundedStatus(`${proxy.url}${path}`, cookie)));

test('the primary killed: Sentinel fails over, every process carries on against the new primary', async (t) => {
  const user = await split.signIn({ sub: 'sentinel-user', isAdmin: false, email: 'sentinel@example.com', name: 'Sen' });
  assert.deepEqual(await onBoth('/app/x', user.cookie), [200, 200]);
  const before = await group.primaryPort();
  assert.equal(before, group.primary.port);

  const killedAt = Date.now();
  await group.primary.kill();
  const answers: Array<number | string> = [];
  await eventually('200 on both proxies after the failover', async () => {
    const statuses = await onBoth('/app/x', user.cookie);
    answers.push(...statuses);
    return statuses.every((status) => status === 200) && (await group.primaryPort()) !== before;
  }, 30_000, 100);
  const recoveredMs = Date.now() - killedAt;
  assert.equal(await group.primaryPort(), group.replicas[0]!.port, 'the replica was promoted');

  // Writes go to the new primary, and its pub/sub reaches both proxies.
  const created = await request(`${split.adminUrl}/api/services`, {
    method: 'POST',
    headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'After', path: '/after', targetUrl: upstream.origin, requireAuth: false }),
  });
  assert.equal(created.statusCode, 201, await created.body.text());
  const registryMs = await eventually('the new service on both proxies', async () => (await onBoth('/after/x', '')).every((status) => status === 200), 5_000, 20);
  const listed = await request(`${split.adminUrl}/api/sessions?user=sentinel-user`, { headers: { cookie: admin.cookie } });
  const listing = (await listed.body.json()) as { sessions: Array<{ id: string }> };
  assert.equal(listed.statusCode, 200, JSON.stringify(listing));
  const [session] = listing.sessions;
  const revoked = await request(`${split.adminUrl}/api/sessions/${session!.id}`, { method: 'DELETE', headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken } });
  assert.equal(revoked.statusCode, 204);
  const revokedMs = await eventually('the session ended on both proxies', async () => (await onBoth('/app/x', user.cookie)).every((status) => status === 401), 5_000, 20);

  const kinds = [...new Set(answers.map(String))].sort();
  t.diagnostic(`failover: 200 on both proxies ${recoveredMs} ms after the primary was killed; answers meanwhile: ${kinds.join(', ')}; a registry change reached both in ${registryMs} ms, a revocation in ${revokedMs} ms`);
  assert.ok(recoveredMs < 15_000, `${recoveredMs} ms`);
  assert.ok(registryMs <= 1_000 && revokedMs <= 1_000);
  // Failing closed while there is no primary (503), never hanging and never a 500.
  assert.ok(answers.every((status) => status === 200 || status === 503), kinds.join(', '));
});
