/**
 * The scenarios of README "Running a fleet" for one variant, as a node:test suite: the fleet is started once,
 * the scenarios run in an order where each leaves it whole for the next (the primary's host last,
 * since it moves the primary), and the fleet is torn down whatever happened. Skipped, saying why,
 * where the machine cannot build the data centre.
 */
import { after, before, describe, test } from 'node:test';
import { adminHostDown, ADMIN_DOWN_MS } from '../scenarios/admin-down.js';
import { crossHostChanges } from '../scenarios/cross-host.js';
import { primaryHostCut } from '../scenarios/primary-cut.js';
import { proxyCutFromRedis } from '../scenarios/proxy-partition.js';
import { fleetLabel, startFleet, type Fleet, type FleetVariant } from './fleet.js';
import { fleetUnsupported } from './network.js';

/** Starting the fleet: ten-odd processes on a loaded 2-core machine, and a cluster to form. */
const START_TIMEOUT_MS = 180_000;
/** One scenario, the waits inside it bounded on their own. */
const SCENARIO_TIMEOUT_MS = 120_000;

/** Registers the suite for `variant`. */
export function fleetSuite(variant: FleetVariant): void {
  const skip = fleetUnsupported();
  describe(`fleet: ${fleetLabel(variant)}`, { skip: skip ?? false }, () => {
    let fleet: Fleet;
    before(async () => {
      fleet = await startFleet(variant);
    }, { timeout: START_TIMEOUT_MS });
    after(async () => {
      await fleet?.close();
    }, { timeout: 60_000 });

    test('a registry change and a logout on one proxy host reach the other within 1 s', { timeout: SCENARIO_TIMEOUT_MS }, (t) => crossHostChanges(fleet, t));
    test('a proxy host cut off from Redis fails closed, is not ready, and catches up within 1 s of its return', { timeout: SCENARIO_TIMEOUT_MS }, (t) => proxyCutFromRedis(fleet, t));
    test('the admin host down for a minute: sessions keep working, every record stored once it returns', { timeout: ADMIN_DOWN_MS + SCENARIO_TIMEOUT_MS }, (t) => adminHostDown(fleet, t));
    test('the Redis primary host cut off: failover, 200 within 15 s, nothing hangs, nothing lost', { timeout: SCENARIO_TIMEOUT_MS }, (t) => primaryHostCut(fleet, t));
  });
}
