import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { freePort } from '../support/free-port.js';
import { rawUpstream, startUpstream, type RawUpstream, type Upstream } from '../support/upstream.js';

/**
 * README, "Health": `gatehouse_upstream_errors_total{service,kind}` counts target failures and
 * `gatehouse_requests_total{service,status_class}` every request by outcome, read the way an
 * operator reads them: the embedded gateway's `/metrics` on the admin port.
 */

let slow: Upstream;
let garbage: RawUpstream;
let unusual: RawUpstream;
const ids: Record<'down' | 'slow' | 'garbage' | 'unusual', string> = { down: '', slow: '', garbage: '', unusual: '' };

const env = useAdminSession({ env: { UPSTREAM_TIMEOUT: '300ms' } }, async (env) => {
  // Answers nothing, except `/cut`: headers promising 100 bytes, ten of them, then a reset.
  slow = await startUpstream((req, res) => {
    if (req.url !== '/cut') return;
    res.writeHead(200, { 'content-length': 100 });
    res.write('only ten b', () => res.destroy());
  });
  garbage = await rawUpstream('NOT HTTP AT ALL\r\n\r\n');
  unusual = await rawUpstream('HTTP/1.1 600 Beyond\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
  const targets = { down: `http://127.0.0.1:${await freePort()}`, slow: slow.origin, garbage: garbage.origin, unusual: unusual.origin };
  for (const [name, targetUrl] of Object.entries(targets) as [keyof typeof ids, string][]) {
    const created = await env.call('POST', '/api/services', { as: env.admin, json: { name, path: `/${name}`, targetUrl, requireAuth: false } });
    assert.equal(created.status, 201, created.text);
    ids[name] = created.json.id;
  }
});
after(async () => {
  await slow?.close();
  await garbage?.close();
  await unusual?.close();
});

async function statusOf(path: string): Promise<number> {
  const response = await request(`${env.gw.origin}${path}`);
  await response.body.dump();
  return response.statusCode;
}

/** The value of metric `name` with exactly `labels` (in their order) in a /metrics text (0 when absent). */
function sample(metrics: string, name: string, labels: Record<string, string>): number {
  const selector = Object.entries(labels).map(([key, value]) => `${key}="${value}"`).join(',');
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${selector}} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

function upstreamErrors(metrics: string, serviceId: string, kind: string): number {
  return sample(metrics, 'gatehouse_upstream_errors_total', { service: serviceId, kind });
}

async function scrape(): Promise<string> {
  return (await request(`${env.gw.adminUrl}/metrics`)).body.text();
}

test('refusals, timeouts and broken responses are counted per service and kind in /metrics', async () => {
  assert.equal(await statusOf('/down/a'), 503);
  assert.equal(await statusOf('/down/b'), 503);
  assert.equal(await statusOf('/slow/hang'), 504);
  assert.equal(await statusOf('/garbage/x'), 502);
  // Cut off after its head: the client gets a truncated response, the target a bad_gateway count.
  const cut = await request(`${env.gw.origin}/slow/cut`);
  assert.equal(cut.statusCode, 200);
  await assert.rejects(cut.body.text());

  const metrics = await scrape();
  assert.equal(upstreamErrors(metrics, ids.down, 'unavailable'), 2);
  assert.equal(upstreamErrors(metrics, ids.slow, 'timeout'), 1);
  assert.equal(upstreamErrors(metrics, ids.slow, 'bad_gateway'), 1);
  assert.equal(upstreamErrors(metrics, ids.garbage, 'bad_gateway'), 1);
  for (const [kind, service] of [['timeout', ids.down], ['bad_gateway', ids.down], ['unavailable', ids.slow], ['unavailable', ids.garbage]]) {
    assert.equal(upstreamErrors(metrics, service!, kind!), 0, `${kind} for ${service}`);
  }
});

test('every request is counted once per service and status class, the class being the first digit of any status relayed', async () => {
  const before = await scrape();
  const count = (metrics: string, service: string, statusClass: string) => sample(metrics, 'gatehouse_requests_total', { service, status_class: statusClass });
  assert.equal(await statusOf('/unusual/a'), 600);
  assert.equal(await statusOf('/unusual/b'), 600);
  assert.equal(await statusOf('/down/c'), 503);
  const after = await scrape();
  assert.equal(count(after, ids.unusual, '6xx') - count(before, ids.unusual, '6xx'), 2);
  assert.equal(count(after, ids.down, '5xx') - count(before, ids.down, '5xx'), 1);
  assert.equal(count(after, ids.down, '2xx'), 0);
});
