/**
 * One proxy host cut off from the Redis hosts but not from clients (README "Running a fleet"): it fails closed
 * as README's failure table says (a session it has not seen lately gets 503, never a hang), its
 * /readyz says not ready, the other proxy serves; a registry change and a sign-out made meanwhile
 * reach it within 1 s of the link's return.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { eventually } from '../../support/eventually.js';
import { fleetLabel, type Fleet } from '../support/fleet.js';
import { HANG_LIMIT_MS, probe, report, type Probe } from '../support/probe.js';

/** How soon the returning proxy must have caught up. */
const CATCH_UP_LIMIT_MS = 1_000;

/** Isolates the second proxy's host from the Redis hosts, checks it fails closed, changes things meanwhile, and measures its catch-up. */
export async function proxyCutFromRedis(fleet: Fleet, t: TestContext): Promise<void> {
  const [serving, cut] = fleet.gateway.proxies;
  const signedOutMeanwhile = await fleet.signInUser();
  const neverSeen = await fleet.signInUser();
  assert.equal((await probe(`${cut.url}/app/x`, { cookie: signedOutMeanwhile.cookie })).status, 200);
  const answers: Probe[] = [];
  const ask = async (url: string, cookie = '') => {
    const answer = await probe(url, cookie === '' ? {} : { cookie });
    answers.push(answer);
    return answer.status;
  };

  const cutAt = Date.now();
  fleet.dc.isolate(cut.host, fleet.redisHosts);
  let notReadyMs: number, closedMs: number, path: string, restoredAt: number;
  try {
    notReadyMs = await eventually(`/readyz of ${cut.host.name} to say not ready`, async () => (await ask(`${cut.internalUrl}/readyz`)) === 503, 30_000, 100);
    closedMs = await eventually(`${cut.host.name} to refuse a session it has not seen (503)`, async () => (await ask(`${cut.url}/app/x`, neverSeen.cookie)) === 503, 30_000, 100);
    assert.equal(await ask(`${serving.url}/app/x`, neverSeen.cookie), 200, 'the other proxy serves');

    path = `/late-${Date.now()}`;
    await fleet.gateway.createService(fleet.admin, { name: 'Late', path, targetUrl: fleet.gateway.upstream.origin, requireAuth: false });
    await fleet.gateway.signOut(signedOutMeanwhile, serving);
    await eventually('the other proxy to have both changes', async () => (await ask(`${serving.url}${path}/x`)) === 200 && (await ask(`${serving.url}/app/x`, signedOutMeanwhile.cookie)) === 401, 10_000, 20);
  } finally {
    fleet.dc.rejoin(cut.host, fleet.redisHosts);
    restoredAt = Date.now();
  }
  const caughtUp = async () => (await ask(`${cut.url}${path}/x`)) === 200 && (await ask(`${cut.url}/app/x`, signedOutMeanwhile.cookie)) === 401;
  const catchUpMs = await eventually(`${cut.host.name} to catch up with the registry and the sign-out`, caughtUp, 30_000, 20);
  const readyAgainMs = await eventually(`${cut.host.name} ready again`, async () => (await ask(`${cut.internalUrl}/readyz`)) === 200, 30_000, 20) + catchUpMs;
  const slowest = Math.max(...answers.map((answer) => answer.ms));
  const unanswered = answers.filter((answer) => typeof answer.status === 'string');

  report(t, `${fleetLabel(fleet.variant)} proxy cut from Redis`, {
    notReadyAfterMs: notReadyMs,
    failsClosedAfterMs: closedMs,
    partitionMs: restoredAt - cutAt,
    catchUpAfterReturnMs: catchUpMs,
    readyAgainAfterReturnMs: readyAgainMs,
    probes: answers.length,
    unanswered: unanswered.length,
    slowestMs: slowest,
  });
  assert.deepEqual(unanswered, [], 'every probe answered');
  assert.ok(slowest <= HANG_LIMIT_MS, `a request took ${slowest} ms`);
  assert.ok(catchUpMs <= CATCH_UP_LIMIT_MS, `caught up ${catchUpMs} ms after the link returned`);
}
