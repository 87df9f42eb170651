import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { service } from '../support/samples.js';
import { echo, startUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const SLOW_MS = 150;

describe('access log: one record per request matched to a service', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  const hanging: ServerResponse[] = [];
  let hangArrived: (() => void) | undefined;
  const services = {
    app: service({ path: '/app', targetUrl: '' }),
    private: service({ path: '/private', targetUrl: '', requireAuth: true }),
    off: service({ path: '/off', targetUrl: '', enabled: false }),
    down: service({ path: '/down', targetUrl: '' }),
  };

  before(async () => {
    upstream = await startUpstream((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/teapot') res.writeHead(418).end('short and stout');
      else if (req.url === '/slow') setTimeout(() => echo(req, res), SLOW_MS);
      else if (req.url === '/hang') {
        hanging.push(res);
        hangArrived?.();
      } else echo(req, res);
    });
    const closed = net.createServer().listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    services.app.targetUrl = upstream.origin;
    services.private.targetUrl = upstream.origin;
    services.off.targetUrl = upstream.origin;
    services.down.targetUrl = `http://127.0.0.1:${closedPort}`;
    gateway = await startDataPlane({ services: Object.values(services) });
  });
  after(async () => {
    for (const res of hanging) res.destroy();
    await gateway.close();
    await upstream.close();
  });

  it('writes the right fields for every outcome, and none for 404, 400 or gateway paths', async () => {
    const startedAt = Date.now();
    const cookie = await gateway.signIn({ sub: 'logged-sub' });
    const outcomes: [string, string, Record<string, string>, number][] = [
      ['GET', '/app/x?y=1', {}, 200],
      ['POST', '/app/form', { cookie }, 200],
      ['GET', '/app/teapot', {}, 418],
      ['GET', '/private/secret', {}, 401],
      ['DELETE', '/private/secret', { cookie }, 200],
      ['GET', '/off/x', {}, 503],
      ['GET', '/down/x', {}, 503],
    ];
    for (const [method, target, headers, status] of outcomes) {
      const response = await gateway.fetch(target, { method: method as 'GET', headers, body: method === 'POST' ? 'a=b' : undefined });
      assert.equal(response.status, status, target);
    }
    for (const target of ['/nowhere/x', '/auth/login', '/app/%2e%2e/x', '/']) await gateway.fetch(target);
    await gateway.fetch('/app/barrier');

    const records = await gateway.waitForRecords(outcomes.length + 1);
    assert.deepEqual(
      records.map(({ method, path, statusCode, serviceId, userId }) => [method, path, statusCode, serviceId, userId]),
      [
        ['GET', '/app/x?y=1', 200, services.app.id, null],
        ['POST', '/app/form', 200, services.app.id, 'logged-sub'],
        ['GET', '/app/teapot', 418, services.app.id, null],
        ['GET', '/private/secret', 401, services.private.id, null],
        ['DELETE', '/private/secret', 200, services.private.id, 'logged-sub'],
        ['GET', '/off/x', 503, services.off.id, null],
        ['GET', '/down/x', 503, services.down.id, null],
        ['GET', '/app/barrier', 200, services.app.id, null],
      ],
    );
    const eventIds = new Set(records.map((record) => record.eventId));
    assert.equal(eventIds.size, records.length);
    for (const record of records) {
      assert.match(record.eventId, UUID);
      assert.equal(record.ipAddress, '127.0.0.1');
      assert.ok(Number.isInteger(record.responseTimeMs) && record.responseTimeMs >= 0);
      assert.ok(record.timestamp >= startedAt && record.timestamp <= Date.now());
    }
  });

  it('measures the response time from request start to response end', async () => {
    const before = gateway.records.length;
    const started = Date.now();
    assert.equal((await gateway.fetch('/app/slow')).status, 200);
    const elapsed = Date.now() - started;
    const [record] = (await gateway.waitForRecords(before + 1)).slice(before);
    assert.ok(record!.responseTimeMs >= SLOW_MS - 1, `${record!.responseTimeMs} ms`);
    assert.ok(record!.responseTimeMs <= elapsed + 1, `${record!.responseTimeMs} ms > ${elapsed} ms`);
  });

  it('writes one record, status 499, when the client leaves before the response', async () => {
    const before = gateway.records.length;
    const agent = new Agent();
    const controller = new AbortController();
    const arrived = new Promise<void>((resolve) => (hangArrived = resolve));
    const response = agent.request({ origin: gateway.origin, path: '/app/hang', method: 'GET', signal: controller.signal });
    await arrived;
    controller.abort();
    await assert.rejects(response);
    await agent.close();
    await gateway.fetch('/app/after-abort');
    const records = (await gateway.waitForRecords(before + 2)).slice(before);
    assert.deepEqual(
      records.map(({ path, statusCode }) => [path, statusCode]),
      [
        ['/app/hang', 499],
        ['/app/after-abort', 200],
      ],
    );
  });
});
