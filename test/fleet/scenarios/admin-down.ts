/**
 * The admin host down for a minute (its link cut; README "Running a fleet"): under load from the client host,
 * the proxies keep serving existing sessions; the access-log records wait in the Redis stream
 * and, once the host is back, every response the clients got is stored exactly once.
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { auditAccessLog } from '../support/access-log-audit.js';
import { fleetLabel, type Fleet } from '../support/fleet.js';
import { loadFigures, startLoad, steadyOn } from '../support/load.js';
import { HANG_LIMIT_MS, report } from '../support/probe.js';

/** How long the admin host stays down: the scenario itself is this duration. */
export const ADMIN_DOWN_MS = 60_000;
/** How long the returning admin may take to store what waited in the stream. */
const CATCH_UP_LIMIT_MS = 60_000;

/** Cuts the admin host's link for {@link ADMIN_DOWN_MS} under load; checks the proxies served and every response was stored once. */
export async function adminHostDown(fleet: Fleet, t: TestContext): Promise<void> {
  const { gateway, dc } = fleet;
  const user = await fleet.signInUser();
  const targets = gateway.proxies.map((proxy) => proxy.url);
  const tag = `admindown${Date.now()}`;
  const load = startLoad(fleet.client, { targets, path: '/app/load', tag, cookie: user.cookie });
  let downAt = 0;
  let upAt = 0;
  try {
    await load.until('the load answered on both proxies', (outcomes) => steadyOn(outcomes, targets, 0, 10));
    downAt = Date.now();
    dc.cutLink(gateway.adminHost);
    await sleep(ADMIN_DOWN_MS);
  } finally {
    dc.restoreLink(gateway.adminHost);
    upAt = Date.now();
  }
  const outcomes = await load.stop();
  const during = loadFigures(outcomes.filter((outcome) => outcome.start >= downAt && outcome.start < upAt));
  const all = loadFigures(outcomes);
  const audit = await auditAccessLog(gateway.adminUrl, fleet.admin, fleet.appId, tag, outcomes, CATCH_UP_LIMIT_MS);

  report(t, `${fleetLabel(fleet.variant)} admin host down`, {
    downMs: upAt - downAt,
    sentWhileDown: during.sent,
    failedWhileDown: during.failed,
    kindsWhileDown: during.kinds,
    sent: all.sent,
    failed: all.failed,
    slowestMs: all.slowestMs,
    responsesReceived: audit.received,
    recordsStored: audit.stored,
    missing: audit.missing.length,
    duplicated: audit.duplicated.length,
    storedAllWithinMsOfReturn: audit.caughtUpMs,
  });
  assert.ok(during.sent > 0, 'load ran while the admin was down');
  assert.equal(during.failed, 0, `requests failed while the admin was down: ${JSON.stringify(during.kinds)}`);
  assert.ok(all.slowestMs <= HANG_LIMIT_MS, `a request took ${all.slowestMs} ms`);
  assert.deepEqual(audit.missing.slice(0, 20), [], `${audit.missing.length} responses have no access-log record`);
  assert.deepEqual(audit.duplicated.slice(0, 20), [], `${audit.duplicated.length} responses have more than one record`);
}
