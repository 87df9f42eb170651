import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { service } from '../support/samples.js';
import { echo, startUpstream, type Echo, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

describe('routing: longest whole-segment prefix', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  let registry: ReturnType<typeof service>[];

  before(async () => {
    upstream = await startUpstream(echo);
    registry = [
      service({ path: '/app', targetUrl: `${upstream.origin}/app-target` }),
      service({ path: '/app/admin', targetUrl: `${upstream.origin}/admin-target` }),
      service({ path: '/api-docs', targetUrl: `${upstream.origin}/docs` }),
      service({ path: '/off', targetUrl: upstream.origin, enabled: false }),
    ];
    gateway = await startDataPlane({ services: registry });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  /**
   * The path the upstream received for `target`. A GET of exactly a prefix is redirected (see
   * bare-prefix.test.ts), so those are sent as POST, which is forwarded to the base path.
   */
  async function forwardedPath(target: string, method: 'GET' | 'POST' = 'GET'): Promise<string> {
    const response = await gateway.fetch(target, { method, body: method === 'POST' ? 'x' : undefined });
    assert.equal(response.status, 200, `${target}: ${response.text}`);
    return response.json<Echo>().url;
  }

  it('matches the prefix itself, with a trailing slash, below it and with a query', async () => {
    assert.equal(await forwardedPath('/app', 'POST'), '/app-target');
    assert.equal(await forwardedPath('/app/'), '/app-target/');
    assert.equal(await forwardedPath('/app/x/y'), '/app-target/x/y');
    assert.equal(await forwardedPath('/app?q=1&r=%20', 'POST'), '/app-target?q=1&r=%20');
    assert.equal(await forwardedPath('/app/x?q=1'), '/app-target/x?q=1');
  });

  it('prefers the longest registered prefix', async () => {
    assert.equal(await forwardedPath('/app/admin', 'POST'), '/admin-target');
    assert.equal(await forwardedPath('/app/admin/users'), '/admin-target/users');
    assert.equal(await forwardedPath('/app/administrator'), '/app-target/administrator');
  });

  it('never matches part of a segment', async () => {
    const response = await gateway.fetch('/apple');
    assert.equal(response.status, 404);
    assert.deepEqual(response.json(), { error: 'Service not found' });
    assert.equal((await gateway.fetch('/app-x')).status, 404);
    assert.equal(await forwardedPath('/api-docs/v1'), '/docs/v1');
  });

  it('ignores case when matching, and forwards the remainder as sent', async () => {
    assert.equal(await forwardedPath('/APP/X'), '/app-target/X');
    assert.equal(await forwardedPath('/App/Admin/Users'), '/admin-target/Users');
    assert.equal((await gateway.fetch('/APPLE')).status, 404);
  });

  it('counts an encoded slash as a separator for matching, and forwards one inside the remainder untouched', async () => {
    assert.equal(await forwardedPath('/app%2Fadmin', 'POST'), '/admin-target');
    assert.equal(await forwardedPath('/app/admin%2Fx'), '/admin-target/x');
    assert.equal(await forwardedPath('/app/a%2Fb/c%2fd'), '/app-target/a%2Fb/c%2fd');
  });

  it('forwards the remainder byte for byte', async () => {
    assert.equal(await forwardedPath('/app/%7Euser/a+b;c=d//e'), '/app-target/%7Euser/a+b;c=d//e');
    assert.equal(await forwardedPath('/app/x?a=%2e%2e/..&b'), '/app-target/x?a=%2e%2e/..&b');
  });

  it('answers 404 Service not found without a match and 503 Service is disabled for a disabled service', async () => {
    const missing = await gateway.fetch('/nowhere/x');
    assert.equal(missing.status, 404);
    assert.deepEqual(missing.json(), { error: 'Service not found' });
    const disabled = await gateway.fetch('/off/x');
    assert.equal(disabled.status, 503);
    assert.deepEqual(disabled.json(), { error: 'Service is disabled' });
  });

  it('passes the method through', async () => {
    for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const response = await gateway.fetch('/app/m', { method, body: method === 'GET' ? undefined : 'x' });
      assert.equal(response.json<Echo>().method, method);
    }
    const head = await gateway.fetch('/app/m', { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  it('follows a new registry snapshot', async () => {
    await gateway.publish([service({ path: '/fresh', targetUrl: `${upstream.origin}/new` })]);
    try {
      assert.equal(await forwardedPath('/fresh/x'), '/new/x');
      assert.equal((await gateway.fetch('/app/x')).status, 404);
    } finally {
      await gateway.publish(registry);
    }
  });
});

describe('routing: base paths and path joining', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({
      services: [
        service({ path: '/plain', targetUrl: upstream.origin }),
        service({ path: '/slash', targetUrl: `${upstream.origin}/` }),
        service({ path: '/based', targetUrl: `${upstream.origin}/base/path` }),
        service({ path: '/trailing', targetUrl: `${upstream.origin}/base/` }),
        service({ path: '/deep/er/prefix', targetUrl: `${upstream.origin}/b` }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  const cases: [string, string][] = [
    ['/plain', '/'],
    ['/plain/', '/'],
    ['/plain?q=1', '/?q=1'],
    ['/plain/x', '/x'],
    ['/slash', '/'],
    ['/slash/x/', '/x/'],
    ['/based', '/base/path'],
    ['/based/', '/base/path/'],
    ['/based?a=b', '/base/path?a=b'],
    ['/based/x/y?a=b', '/base/path/x/y?a=b'],
    ['/trailing/x', '/base/x'],
    ['/trailing', '/base'],
    ['/deep/er/prefix/z', '/b/z'],
  ];
  for (const [target, expected] of cases) {
    // A GET of exactly a prefix is redirected (bare-prefix.test.ts); a POST is forwarded.
    it(`${target} → ${expected}`, async () => {
      const response = await gateway.fetch(target, { method: 'POST', body: 'x' });
      assert.equal(response.status, 200);
      assert.equal(response.json<Echo>().url, expected);
    });
  }

  it('does not match a deeper path under a shorter registered prefix', async () => {
    assert.equal((await gateway.fetch('/deep/er')).status, 404);
    assert.equal((await gateway.fetch('/deep/er/prefixes')).status, 404);
  });
});

describe('routing: a service at /', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({
      services: [
        service({ path: '/', targetUrl: `${upstream.origin}/root` }),
        service({ path: '/app', targetUrl: `${upstream.origin}/app` }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('takes everything no other service matches, including / itself', async () => {
    assert.equal((await gateway.fetch('/')).json<Echo>().url, '/root/');
    assert.equal((await gateway.fetch('/?x=1')).json<Echo>().url, '/root/?x=1');
    assert.equal((await gateway.fetch('/apple/pie')).json<Echo>().url, '/root/apple/pie');
    assert.equal((await gateway.fetch('/app/x')).json<Echo>().url, '/app/x');
    assert.equal(gateway.adminRequests.length, 0);
  });

  it('still leaves gateway paths to the admin plane', async () => {
    const response = await gateway.fetch('/auth/login?returnTo=%2F');
    assert.deepEqual(response.json(), { plane: 'admin', url: '/auth/login?returnTo=%2F' });
  });

  it('leaves /favicon.ico to the service at /', async () => {
    const handedOver = gateway.adminRequests.length;
    assert.equal((await gateway.fetch('/favicon.ico')).json<Echo>().url, '/root/favicon.ico');
    assert.equal(gateway.adminRequests.length, handedOver);
  });

  it('sends no X-Forwarded-Prefix for the root service', async () => {
    const received = (await gateway.fetch('/x')).json<Echo>();
    assert.equal(received.headers.some(([name]) => name.toLowerCase() === 'x-forwarded-prefix'), false);
  });
});

describe('routing: gateway paths', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    gateway = await startDataPlane({ services: [service({ path: '/app', targetUrl: upstream.origin })] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('hands /auth, /api, /dashboard and / (no service at /) to the admin plane', async () => {
    const targets = ['/auth/login', '/auth', '/api/services?limit=1', '/dashboard', '/dashboard/stats', '/', '/?next=1'];
    for (const target of targets) {
      const response = await gateway.fetch(target);
      assert.equal(response.status, 200, target);
      assert.deepEqual(response.json(), { plane: 'admin', url: target });
    }
    assert.deepEqual(gateway.adminRequests, targets);
  });

  it('hands /favicon.ico to the admin plane (the gateway serves its icon) while no service matches it', async () => {
    const response = await gateway.fetch('/favicon.ico');
    assert.deepEqual(response.json(), { plane: 'admin', url: '/favicon.ico' });
    await gateway.publish([service({ path: '/favicon.ico', targetUrl: upstream.origin })]);
    try {
      assert.equal((await gateway.fetch('/favicon.ico/x')).json<Echo>().url, '/x', 'a service at that path gets it');
    } finally {
      await gateway.publish([service({ path: '/app', targetUrl: upstream.origin })]);
    }
  });

  it('does not hand look-alike paths to the admin plane', async () => {
    assert.equal((await gateway.fetch('/authx')).status, 404);
    assert.equal((await gateway.fetch('/apis/x')).status, 404);
    assert.deepEqual(gateway.adminRequests.includes('/authx'), false);
  });
});

describe('routing: 10,000 services', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(echo);
    const services = [];
    for (let i = 0; i < 10_000; i++) {
      const path = i % 2 === 0 ? `/svc${i}` : `/team${i % 100}/svc${i}`;
      services.push(service({ path, targetUrl: `${upstream.origin}/t${i}` }));
    }
    gateway = await startDataPlane({ services });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('routes every sampled service to its own target', async () => {
    for (const i of [0, 1, 2, 99, 100, 101, 4_998, 4_999, 9_998, 9_999]) {
      const path = i % 2 === 0 ? `/svc${i}` : `/team${i % 100}/svc${i}`;
      const response = await gateway.fetch(`${path}/x?i=${i}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.json<Echo>().url, `/t${i}/x?i=${i}`);
    }
    assert.equal((await gateway.fetch('/svc10000')).status, 404);
    assert.equal((await gateway.fetch('/team3/svc3/deeper/still')).json<Echo>().url, '/t3/deeper/still');
  });
});
