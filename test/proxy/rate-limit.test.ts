import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { service } from '../support/samples.js';
import { echo, startUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

describe('general rate limit (RATE_LIMIT_GENERAL 3/1m)', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  let svc: ReturnType<typeof service>;

  before(async () => {
    upstream = await startUpstream(echo);
    svc = service({ path: '/app', targetUrl: upstream.origin });
    gateway = await startDataPlane({ env: { RATE_LIMIT_GENERAL: '3/1m' }, services: [svc] });
  });
  after(async () => {
    await gateway.close(); // again, after the last test's: closing twice is safe
    await upstream.close();
  });

  it('leaves gateway paths to the admin plane uncounted, then refuses the fourth request with 429', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await gateway.fetch('/auth/login')).status, 200);
    for (let i = 0; i < 3; i++) assert.equal((await gateway.fetch(`/app/ok${i}`)).status, 200);

    const refused = await gateway.fetch('/app/refused');
    assert.equal(refused.status, 429);
    assert.deepEqual(refused.json(), { error: 'Too many requests, please try again later' });
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    assert.equal(refused.headers['ratelimit-limit'], '3');
    assert.equal(refused.headers['ratelimit-remaining'], '0');
    assert.equal(refused.headers['ratelimit-reset'], String(retryAfter));

    // Counted before the 404: an unknown path is refused too, and not access-logged.
    assert.equal((await gateway.fetch('/nowhere')).status, 429);
    // Gateway paths stay reachable: the admin plane applies its own limits.
    assert.equal((await gateway.fetch('/auth/login')).status, 200);
  });

  it('counts every refusal in /metrics at once, with an empty service for an unmatched path', async () => {
    const metrics = await gateway.metrics.registry.getSingleMetricAsString('gatehouse_rate_limited_requests_total');
    assert.match(metrics, new RegExp(`gatehouse_rate_limited_requests_total\\{service="${svc.id}"\\} 1\\n`));
    assert.match(metrics, /gatehouse_rate_limited_requests_total\{service=""\} 1$/m);
  });

  it('access-logs each allowed request, and the 429s of a matched service as one record with their count, written at the latest when the gateway stops; nothing for an unmatched path', async () => {
    assert.equal((await gateway.fetch('/app/last')).status, 429);
    await gateway.close();
    const records = gateway.records;
    assert.deepEqual(
      records.slice(0, 3).map((record) => [record.path, record.statusCode, record.count]),
      [
        ['/app/ok0', 200, undefined],
        ['/app/ok1', 200, undefined],
        ['/app/ok2', 200, undefined],
      ],
    );
    // One summary, or two when a minute ended between the two refusals.
    const summaries = records.slice(3);
    assert.ok(summaries.length >= 1 && summaries.length <= 2, `${summaries.length} summaries`);
    assert.equal(summaries[0]!.path, '/app/refused');
    assert.ok(summaries.every((record) => record.statusCode === 429 && record.serviceId === svc.id));
    assert.equal(summaries.reduce((sum, record) => sum + record.count!, 0), 2);
  });
});
