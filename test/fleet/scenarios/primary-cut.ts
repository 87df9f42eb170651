/**
 * The Redis primary's host cut off (its link down; README "Running a fleet"), under load from the client host:
 * the rest promotes a replica, both proxies and the admin carry on against it; protected requests
 * answer 200 again within 15 s of the cut, no request hangs longer than 2 s, and every response
 * the clients received is in the access log exactly once. The host then returns and rejoins.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { eventually } from '../../support/eventually.js';
import { auditAccessLog, type AccessLogAudit } from '../support/access-log-audit.js';
import { fleetLabel, type Fleet } from '../support/fleet.js';
import type { LoadOutcome } from '../support/load-client.js';
import { loadFigures, recoveryMs, startLoad, steadyOn } from '../support/load.js';
import type { FleetHost } from '../support/network.js';
import { HANG_LIMIT_MS, probe, report } from '../support/probe.js';

/** Protected requests must answer 200 again within this long of the cut, detection included. */
const RECOVERY_LIMIT_MS = 15_000;
/**
 * A proxy serves a session Redis confirmed in the last 5 s from its cache: 200s sent before the
 * cut plus this long prove nothing about the new primary, so steadiness is judged after it.
 */
const SESSION_CACHE_MS = 6_000;

/** What happened while the primary's host was away. */
interface CutFigures {
  cutAt: number;
  promotedAfterMs: number;
  outcomes: readonly LoadOutcome[];
  /** When the admin took a registry change again, in ms from the cut. */
  adminWritesAfterMs: number;
  registryMs: number;
  audit: AccessLogAudit;
}

/** Cuts the host of a Redis primary under load, checks recovery, hangs and the access log, then lets the host rejoin. */
export async function primaryHostCut(fleet: Fleet, t: TestContext): Promise<void> {
  const primary = await fleet.redis.primaryHost();
  let figures: CutFigures;
  try {
    figures = await underCut(fleet, primary);
  } finally {
    fleet.dc.restoreLink(primary);
  }
  await fleet.redis.settled();

  const { cutAt, outcomes, audit } = figures;
  const recovery = recoveryMs(outcomes, cutAt);
  const afterCut = loadFigures(outcomes, cutAt);
  report(t, `${fleetLabel(fleet.variant)} primary host cut`, {
    cutHost: primary.name,
    promotedAfterMs: figures.promotedAfterMs,
    recoveredAfterMs: recovery,
    sentAfterCut: afterCut.sent,
    failedAfterCut: afterCut.failed,
    kindsAfterCut: afterCut.kinds,
    slowestMs: loadFigures(outcomes).slowestMs,
    adminWritesAfterMs: figures.adminWritesAfterMs,
    registryChangeReachedProxiesMs: figures.registryMs,
    responsesReceived: audit.received,
    recordsStored: audit.stored,
    missing: audit.missing.length,
    duplicated: audit.duplicated.length,
  });
  for (const [target, ms] of Object.entries(recovery)) assert.ok(ms !== undefined && ms <= RECOVERY_LIMIT_MS, `${target} answered 200 again after ${ms} ms`);
  assert.ok(figures.adminWritesAfterMs <= RECOVERY_LIMIT_MS, `the admin took a registry change ${figures.adminWritesAfterMs} ms after the cut`);
  assert.ok(afterCut.slowestMs <= HANG_LIMIT_MS, `a request took ${afterCut.slowestMs} ms`);
  assert.deepEqual(audit.missing.slice(0, 20), [], `${audit.missing.length} responses have no access-log record`);
  assert.deepEqual(audit.duplicated.slice(0, 20), [], `${audit.duplicated.length} responses have more than one record`);
}

/** Cuts `primary`'s link under load, waits for the failover and steady 200s, and checks the admin carries on (the link is left cut). */
async function underCut(fleet: Fleet, primary: FleetHost): Promise<CutFigures> {
  const { gateway, dc, redis } = fleet;
  const user = await fleet.signInUser();
  const targets = gateway.proxies.map((proxy) => proxy.url);
  const tag = `primarycut${Date.now()}`;
  const load = startLoad(fleet.client, { targets, path: '/app/load', tag, cookie: user.cookie });
  let cutAt = 0;
  let promotedAfterMs = 0;
  try {
    await load.until('the load answered on both proxies', (outcomes) => steadyOn(outcomes, targets, 0, 10));
    cutAt = Date.now();
    dc.cutLink(primary);
    promotedAfterMs = await eventually(`a replica promoted in place of ${primary.name}'s primary`, () => redis.failedOver(primary), 30_000, 100);
    const judgedFrom = Math.max(Date.now(), cutAt + SESSION_CACHE_MS);
    await load.until('200 again on both proxies', (outcomes) => steadyOn(outcomes, targets, judgedFrom, 20), RECOVERY_LIMIT_MS + 15_000).catch((error: Error) => {
      throw new Error(`${error.message}; since the cut: ${JSON.stringify(loadFigures(load.outcomes, cutAt))}\nthe proxies' last output:\n${gateway.proxies.map((proxy) => proxy.process.output().slice(-1_500)).join('\n')}`);
    });
  } finally {
    await load.stop().catch(() => undefined);
  }
  // The admin carries on against the new primary: it takes a registry change (a new path each
  // attempt: one refused after its SQLite commit would be taken), which reaches both proxies.
  let path = '';
  await eventually('the admin to take a registry change', async () => {
    path = `/afterfailover-${Date.now()}`;
    await gateway.createService(fleet.admin, { name: 'After', path, targetUrl: gateway.upstream.origin, requireAuth: false });
    return true;
  }, 30_000, 250).catch((error: Error) => {
    throw new Error(`${error.message}\nthe admin process's last output:\n${gateway.admin.output().slice(-3_000)}`);
  });
  const adminWritesAfterMs = Date.now() - cutAt;
  const registryMs = await eventually(`${path} on both proxies`, async () => (await Promise.all(targets.map((url) => probe(`${url}${path}/x`)))).every((answer) => answer.status === 200), 10_000, 20);
  const audit = await auditAccessLog(gateway.adminUrl, fleet.admin, fleet.appId, tag, load.outcomes);
  return { cutAt, promotedAfterMs, outcomes: load.outcomes, adminWritesAfterMs, registryMs, audit };
}
