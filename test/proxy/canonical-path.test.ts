import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { isCanonicalPath, pathLength } from '../../shared/routing/canonical-path.js';
import { rawRequest } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startEchoUpstream, type Echo, type EchoUpstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

describe('canonical path: what could climb out of the base path gets 400', () => {
  let upstream: EchoUpstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startEchoUpstream();
    gateway = await startDataPlane({ services: [service({ path: '/app', targetUrl: `${upstream.origin}/base` })] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  const refused = [
    '/app/%2e%2e/x',
    '/app/%2E%2E/x',
    '/app/..%2fx',
    '/app/..%2Fx',
    '/app/.%5c..',
    '/app/%2e%5c..%5cx',
    '/app/..',
    '/app/.',
    '/app/./x',
    '/app/x/../../etc/passwd',
    '/app/.%2e/x',
    '/app/%2e',
    '/app/..;/admin',
    '/app/%00',
    '/app/x%00y',
    '/app/%zz',
    '/app/%2',
    '/app/%',
    '/app/x%2G',
    '/app/..?q=1',
    '/auth/../app',
    '/nowhere/../app',
  ];
  for (const target of refused) {
    it(`refuses ${target}`, async () => {
      const before = upstream.requests.length;
      const response = await gateway.fetch(target);
      assert.equal(response.status, 400);
      assert.deepEqual(response.json(), { error: 'Bad request' });
      assert.equal(upstream.requests.length, before, 'nothing reached the upstream');
    });
  }

  it('refuses a raw backslash dot segment', async () => {
    const response = await rawRequest(gateway.port, 'GET /app\\..\\x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.equal(response.status, 400);
  });

  it('refuses a request-target that is not origin-form', async () => {
    for (const target of [`http://127.0.0.1:${gateway.port}/app/x`, '*']) {
      const method = target === '*' ? 'OPTIONS' : 'GET';
      const response = await rawRequest(gateway.port, `${method} ${target} HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
      assert.equal(response.status, 400, target);
    }
    assert.equal(gateway.adminRequests.length, 0);
  });

  const allowed: [string, string][] = [
    ['/app/...', '/base/...'],
    ['/app/.well-known/x', '/base/.well-known/x'],
    ['/app/a.b/c..d', '/base/a.b/c..d'],
    ['/app/%2e%2e%2e', '/base/%2e%2e%2e'],
    ['/app/%252e%252e/x', '/base/%252e%252e/x'],
    ['/app/a%2fb', '/base/a%2fb'],
    ['/app/x?p=../..&q=%2e%2e', '/base/x?p=../..&q=%2e%2e'],
    ['/app/%41%e2%82%ac', '/base/%41%e2%82%ac'],
    ['/app/a;..', '/base/a;..'],
  ];
  for (const [target, forwarded] of allowed) {
    it(`forwards ${target} untouched`, async () => {
      const response = await gateway.fetch(target);
      assert.equal(response.status, 200);
      assert.equal(response.json<Echo>().url, forwarded);
    });
  }
});

describe('isCanonicalPath', () => {
  const check = (target: string): boolean => isCanonicalPath(target, pathLength(target));

  it('accepts plain paths on the fast path and checks only the path, not the query', () => {
    assert.equal(check('/'), true);
    assert.equal(check('/a/b/c'), true);
    assert.equal(check('/a?x=/../%zz'), true);
  });

  it('refuses dot segments however they are spelt', () => {
    for (const target of ['/..', '/.', '/a/%2e', '/a/%2E%2e', '/a\\..', '/a%5c%2e%2e', '/a/..;x', '/a/.;']) {
      assert.equal(check(target), false, target);
    }
  });

  it('refuses NUL, malformed escapes and non-origin-form (a raw # included)', () => {
    for (const target of ['/a%00', '/a\0', '/a%', '/a%g0', '/a%0', '', 'a/b', '*', 'http://x/', '/a#b', '/a?q#f']) {
      assert.equal(check(target), false, JSON.stringify(target));
    }
  });
});
