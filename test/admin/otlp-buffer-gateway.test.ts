/**
 * ACCESS_LOG_OTLP_BUFFER_SIZE against a running embedded gateway, as the attack of README
 * "Security notes": with the OTLP collector down, a client floods a public service with long
 * unique paths; the export's buffer keeps to the configured bound (1MB here), the oldest records
 * are dropped from it and counted in the admin port's `/metrics`, one warning says so, and when the
 * collector is back the newest records reach it.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { request } from 'undici';
import { apiClient } from '../support/api-client.js';
import { eventually } from '../support/eventually.js';
import { statusOf } from '../support/gatehouse-process.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { OtlpReceiver } from '../support/otlp-receiver.js';
import { signIn } from '../support/sessions.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

/** Requests of the flood: about twice what a 1MB buffer holds of their records (about 4.5 KB each). */
const FLOOD = 450;
/** Unique paths just under the proxy's cut (2,048 bytes), so that each record is as large as a stored path gets. */
const pathOf = (i: number) => `/echo/${String(i).padStart(4, '0')}-${'A'.repeat(1_990)}`;

let receiver: OtlpReceiver;
let upstream: EchoUpstream;
let gw: TestGateway;
const logged: string[] = [];

before(async () => {
  receiver = await OtlpReceiver.start();
  await receiver.stop(); // the collector is down from the start
  upstream = await startEchoUpstream();
  gw = await startTestGateway(
    { LOG_LEVEL: 'info', ACCESS_LOG_EXPORT: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, ACCESS_LOG_OTLP_BUFFER_SIZE: '1MB' },
    { onLog: (line) => void logged.push(line) },
  );
  const admin = await signIn(gw);
  const created = await apiClient(gw.origin)('POST', '/api/services', { as: admin, json: { name: 'Echo', path: '/echo', targetUrl: upstream.origin, requireAuth: false } });
  assert.equal(created.status, 201, created.text);
});
after(async () => {
  await gw?.close();
  await receiver?.close();
  await upstream?.close();
});

/** A counter's value in the admin port's /metrics. */
async function metric(name: string): Promise<number> {
  const text = await (await request(`${gw.adminUrl}/metrics`)).body.text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
}

const warnings = (pattern: RegExp) => logged.join('').split('\n').filter((line) => line.includes('"level":40') && pattern.test(line));

test('the attack: a flood of long paths with the collector down keeps the export to ACCESS_LOG_OTLP_BUFFER_SIZE; the oldest dropped, counted in /metrics, warned once; the newest arrive', async () => {
  for (let i = 0; i < FLOOD; i += 50) {
    const statuses = await Promise.all(Array.from({ length: 50 }, (_, k) => statusOf(`${gw.origin}${pathOf(i + k)}`)));
    assert.ok(statuses.every((status) => status === 200));
  }
  // The counters reach /metrics with the writer's next batch or its report every 2 s.
  let dropped = 0;
  // Drops are counted as the writer's batches come: wait for what is beyond the bound.
  await eventually('export drops counted in /metrics', async () => (dropped = await metric('gatehouse_access_log_export_dropped_total')) > FLOOD / 3, 10_000);
  assert.ok(dropped > FLOOD / 3 && dropped < FLOOD, `${dropped} of ${FLOOD} dropped: about what is beyond 1MB`);
  assert.equal(warnings(/export buffer full/).length, 1, 'one warning for the overflow, not one per record');

  await receiver.resume();
  await receiver.until('the newest record', (r) => r.withPathPrefix(pathOf(FLOOD - 1).slice(0, 12)).length === 1, 40_000);
  const arrived = receiver.withPathPrefix('/echo/').length;
  assert.ok(arrived < FLOOD, `${arrived} of ${FLOOD} records arrived: the oldest waiting ones were dropped`);
});
