/**
 * design.md §4.18 against upstreams people run: a rule's path is matched on the routing key, so a
 * spelling that Python's http.server, Express or a WHATWG URL reader takes for a denied path is
 * denied too, and a spelling of a protected path never passes as a public rule's. Each upstream
 * serves a secret at `/secret/x` and a public page (test/support/path-reading-upstreams.ts).
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
import { rawGet, rawRequest } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/**
 * Two services per upstream: `/<name>` public with `/secret` denied, and `/<name>-app` protected
 * with only its public page (`hello`) open to anyone.
 */
function services(name: string, upstream: PathReadingUpstream, hello: string): ReturnType<typeof service>[] {
  return [
    service({ path: `/${name}`, targetUrl: upstream.origin, rules: [{ paths: ['/secret'], action: 'deny' }] }),
    service({ path: `/${name}-app`, targetUrl: upstream.origin, requireAuth: true, rules: [{ paths: [`/${hello}`], methods: ['GET'], action: 'public' }] }),
  ];
}

describe('rule paths against real upstreams: every spelling the upstream serves meets the rule', () => {
  let python: PathReadingUpstream;
  let express: PathReadingUpstream;
  let whatwg: PathReadingUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    [python, express, whatwg] = await Promise.all([startPythonUpstream(), startExpressUpstream(), startWhatwgUpstream()]);
    gateway = await startDataPlane({
      services: [...services('py', python, 'hello.txt'), ...services('ex', express, 'hello'), ...services('url', whatwg, 'hello')],
    });
  });
  after(async () => {
    await gateway?.close();
    await Promise.all([python?.close(), express?.close(), whatwg?.close()]);
  });

  /** A spelling of `/secret/x` after the service's prefix, and the upstream that serves the secret for it. */
  const secretSpellings: [string, () => PathReadingUpstream][] = [
    ['/secret/x', () => python],
    ['//secret/x', () => python],
    ['/%73ecret/x', () => python],
    ['/secret%2Fx', () => python],
    ['/SECRET/x', () => express],
    ['/sEcReT/x', () => express],
    ['/secret\\x', () => whatwg],
  ];
  const prefixOf = (upstream: PathReadingUpstream): string => (upstream === python ? '/py' : upstream === express ? '/ex' : '/url');

  it('the spellings are real: asked directly, each upstream serves the secret for its spelling', async () => {
    for (const [rest, upstream] of secretSpellings) {
      const response = await rawGet(upstream().port, rest);
      assert.equal(response.status, 200, rest);
      assert.ok(response.body.includes(SECRET), rest);
    }
  });

  it('a deny rule refuses every spelling with 403 Access denied, and none reaches the secret', async () => {
    for (const [rest, upstream] of secretSpellings) {
      const target = prefixOf(upstream()) + rest;
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 403, target);
      assert.deepEqual(JSON.parse(response.body), { error: 'Access denied' }, target);
    }
  });

  it('a deny rule refuses a signed-in caller too', async () => {
    const cookie = await gateway.signIn();
    for (const target of ['/py/secret/x', '/ex/Secret/x', '/url/secret\\x']) {
      assert.equal((await rawGet(gateway.port, target, cookie)).status, 403, target);
    }
  });

  it('outside the denied path the public service serves its page', async () => {
    for (const target of ['/py/hello.txt', '/ex/hello', '/url/hello', '/ex/HELLO']) {
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 200, target);
      assert.ok(response.body.includes(HELLO), target);
    }
  });

  it('a public rule opens its page anonymously in every spelling, and nothing beside it', async () => {
    for (const target of ['/py-app/hello.txt', '/py-app//hello.txt', '/py-app/%68ello.txt', '/ex-app/HELLO', '/url-app\\hello']) {
      const response = await rawGet(gateway.port, target);
      assert.equal(response.status, 200, target);
      assert.ok(response.body.includes(HELLO), target);
    }
    const nearMisses = ['/py-app/secret/x', '/py-app/hello.txt%2F..%2Fsecret/x', '/py-app/hello.txtx', '/ex-app/hello2', '/ex-app/SECRET/x', '/url-app/secret\\x'];
    for (const target of nearMisses) {
      const response = await rawGet(gateway.port, target);
      assert.ok(response.status === 401 || response.status === 400, `${target}: ${response.status}`);
      assert.ok(!response.body.includes(SECRET), target);
    }
  });

  it('a public rule for GET does not open other methods on its path', async () => {
    const response = await rawRequest(gateway.port, 'POST /ex-app/hello HTTP/1.1\r\nHost: gatehouse.test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    assert.equal(response.status, 401);
  });
});
