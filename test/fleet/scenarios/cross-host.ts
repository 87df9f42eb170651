/**
 * A registry change and a logout made through one proxy's host take effect on the other host
 * within 1 s (README "Running a fleet").
 */
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { apiClient } from '../../support/api-client.js';
import { eventually } from '../../support/eventually.js';
import { fleetLabel, type Fleet } from '../support/fleet.js';
import { probe, report } from '../support/probe.js';

/** How soon a change made on one host must show on the other. */
const PROPAGATION_LIMIT_MS = 1_000;

/** Creates a service and signs a user out through the first proxy; measures when the second sees each. */
export async function crossHostChanges(fleet: Fleet, t: TestContext): Promise<void> {
  const [near, far] = fleet.gateway.proxies;
  const user = await fleet.signInUser();
  assert.equal((await probe(`${far.url}/app/x`, { cookie: user.cookie })).status, 200);

  const path = `/cross-${Date.now()}`;
  const created = await apiClient(near.url)('POST', '/api/services', { as: fleet.admin, json: { name: 'Cross', path, targetUrl: fleet.gateway.upstream.origin, requireAuth: false } });
  assert.equal(created.status, 201, created.text);
  const registryMs = await eventually(`${path} routed on ${far.host.name}`, async () => (await probe(`${far.url}${path}/x`)).status === 200, 10_000, 10);

  await fleet.gateway.signOut(user, near);
  const logoutMs = await eventually(`the signed-out session refused on ${far.host.name}`, async () => (await probe(`${far.url}/app/x`, { cookie: user.cookie })).status === 401, 10_000, 10);

  report(t, `${fleetLabel(fleet.variant)} cross-host`, { registryChangeOnOtherHostMs: registryMs, logoutOnOtherHostMs: logoutMs });
  assert.ok(registryMs <= PROPAGATION_LIMIT_MS, `registry change took ${registryMs} ms`);
  assert.ok(logoutMs <= PROPAGATION_LIMIT_MS, `logout took ${logoutMs} ms`);
}
