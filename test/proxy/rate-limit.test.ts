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
    await gateway.close();
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

  it('access-logs the 429 of a matched service, and nothing for an unmatched path', async () => {
    assert.equal((await gateway.fetch('/app/last')).status, 429); // the barrier: the last record
    const records = await gateway.waitForRecords(5);
    assert.deepEqual(
      records.map((record) => [record.path, record.statusCode, record.serviceId]),
      [
        ['/app/ok0', 200, svc.id],
        ['/app/ok1', 200, svc.id],
        ['/app/ok2', 200, svc.id],
        ['/app/refused', 429, svc.id],
        ['/app/last', 429, svc.id],
      ],
    );
  });
});
