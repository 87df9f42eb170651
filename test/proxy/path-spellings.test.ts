/**
 * design.md §3.2 (the routing key): a protected service can't be reached through its public parent, whatever the
 * spelling. Each upstream below serves a secret at `/secret/x`; the gateway has a public service
 * at its root and a protected one at `/secret`, e.g. `/py` → python and `/py/secret` →
 * python`/secret`. Before the routing key, every spelling here reached the secret anonymously
 * through the public parent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  HELLO,
  SECRET,
  startExpressUpstream,
  startPythonUpstream,
  startWhatwgUpstream,
  type PathReadingUpstream,
} from '../support/path-reading-upstreams.js';
import { rawGet } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/** The public/protected pair of services for `upstream` under `/<name>`. */
function pair(name: string, upstream: { origin: string }): ReturnType<typeof service>[] {
  return [
    service({ path: `/${name}`, targetUrl: upstream.origin }),
    service({ path: `/${name}/secret`, targetUrl: `${upstream.origin}/secret`, requireAuth: true }),
  ];
}

describe('path spellings: the protected service is chosen whatever the spelling', () => {
  let python: PathReadingUpstream;
  let express: PathReadingUpstream;
  let whatwg: PathReadingUpstream;
  let echo: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    [python, express, whatwg, echo] = await Promise.all([
      startPythonUpstream(),
      startExpressUpstream(),
      startWhatwgUpstream(),
      startEchoUpstream(),
    ]);
    gateway = await startDataPlane({
      services: [
        ...pair('py', python),
        ...pair('ex', express),
        ...pair('pub', whatwg),
        service({ path: '/echo', targetUrl: `${echo.origin}/public` }),
        service({ path: '/echo/secret', targetUrl: `${echo.origin}/secret`, requireAuth: true }),
        service({ path: '/rabbit', targetUrl: echo.origin }),
      ],
    });
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([python?.close(), express?.close(), whatwg?.close(), echo?.close()]);
  });

  /** Each spelling, and the upstream that reads it as `/secret/x` after the public prefix. */
  const spellings: [string, () => PathReadingUpstream][] = [
    ['/py//secret/x', () => python],
    ['/py///secret//x', () => python],
    ['/py/%73ecret/x', () => python],
    ['/py/secre%74/x', () => python],
    ['/py/secret%2Fx', () => python],
    ['/pub/secret\\x', () => whatwg],
    ['/ex/SECRET/x', () => express],
  ];

  it('the spellings are real: asked directly, each upstream serves the secret for its spelling', async () => {
    for (const [target, upstream] of spellings) {
      const rest = target.slice(target.indexOf('/', 1));
      const response = await rawGet(upstream().port, rest);
      assert.equal(response.status, 200, `${rest} straight to its upstream`);
      assert.ok(response.body.includes(SECRET), rest);
    }
  });

  const anonymous = [
    '/py/secret/x',
    ...spellings.map(([target]) => target),
    '/py/secret%5Cx',
    '/py/secret%2fx',
    '/py/SeCrEt/x',
    '/py/secret;jsessionid=1/x',
    '/py/;x/secret/x',
    '/pub%2Fsecret/x',
    '/pub\\secret\\x',
    '/ex/Secret/x',
    '/ex/%53ECRET/x',
  ];
  for (const target of anonymous) {
    it(`anonymous ${target} → 401 Not authenticated, no secret`, async () => {
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 401);
      assert.deepEqual(JSON.parse(response.body), { error: 'Not authenticated' });
    });
  }

  it('a raw # anywhere in the request-target → 400 Bad request, nothing forwarded', async () => {
    const before = echo.requests.length;
    for (const target of ['/pub/secret#/x', '/py/secret#x', '/echo/x#', '/echo/x?q=1#/secret']) {
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 400, target);
      assert.deepEqual(JSON.parse(response.body), { error: 'Bad request' }, target);
    }
    assert.equal(echo.requests.length, before);
  });

  it('public paths are still served by the public services', async () => {
    for (const target of ['/py/hello.txt', '/ex/hello', '/pub/hello', '/PY/hello.txt', '/py//hello.txt']) {
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 200, target);
      assert.ok(response.body.includes(HELLO), target);
    }
  });

  it('signed in, a spelling of the secret is served by the protected service', async () => {
    const cookie = await gateway.signIn();
    for (const [target] of spellings) {
      const response = await rawGet(gateway.port, target, cookie);
      assert.equal(response.status, 200, target);
      assert.ok(response.body.includes(SECRET), target);
    }
  });

  it('signed in, the protected target receives the rest after the prefix, with one / at the boundary', async () => {
    const cookie = await gateway.signIn();
    const cases: [string, string][] = [
      ['/echo/secret%2Fx', '/secret/x'],
      ['/echo//SECRET;jsessionid=1//x?q=1', '/secret/x?q=1'],
      ['/echo/%73ecret%5C%2f\\x/a%2Fb//c', '/secret/x/a%2Fb//c'],
      ['/echo/secret%2F', '/secret/'],
    ];
    for (const [target, received] of cases) {
      const response = await gateway.fetch(target, { headers: { cookie } });
      assert.equal(response.status, 200, target);
      assert.equal(response.json<Echo>().url, received, target);
    }
  });

  it('anonymous, a spelling of the protected prefix reaches no upstream at all', async () => {
    const before = echo.requests.length;
    for (const target of ['/echo/secret%2Fx', '/echo//secret/x', '/echo/SECRET/x', '/echo/secret;a/x']) {
      assert.equal((await gateway.fetch(target)).status, 401, target);
    }
    assert.equal(echo.requests.length, before);
  });

  it('under a public prefix, a run of separators at the boundary is forwarded as one /', async () => {
    const response = await gateway.fetch('/echo/%2F%2Fevil.example/x');
    assert.equal(response.json<Echo>().url, '/public/evil.example/x');
  });

  it('keeps an encoded slash inside the remainder: /rabbit/api/queues/%2F/q1 → /api/queues/%2F/q1', async () => {
    const response = await gateway.fetch('/rabbit/api/queues/%2F/q1');
    assert.equal(response.status, 200);
    assert.equal(response.json<Echo>().url, '/api/queues/%2F/q1');
  });
});

describe('path spellings: gateway paths are never proxied to a service at /', () => {
  let echo: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    echo = await startEchoUpstream();
    gateway = await startDataPlane({ services: [service({ path: '/', targetUrl: echo.origin })] });
  });
  after(async () => {
    await gateway?.close();
    await echo?.close();
  });

  it('hands every spelling of /auth, /api and /dashboard to the admin plane', async () => {
    const targets = ['/API/services', '/%61uth/x', '/Auth', '//dashboard/stats', '/api%2Fservices', '/dashboard;x'];
    for (const target of targets) {
      const response = await gateway.fetch(target);
      assert.deepEqual(response.json(), { plane: 'admin', url: target }, target);
    }
    assert.deepEqual(gateway.adminRequests, targets);
    assert.equal(echo.requests.length, 0);
  });

  it('still proxies everything else to the service at /', async () => {
    const response = await gateway.fetch('/apis/x');
    assert.equal(response.json<Echo>().url, '/apis/x');
  });
});
