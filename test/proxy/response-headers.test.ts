import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/**
 * An upstream whose answer the query decides: `location=<url>` → 302 with that Location;
 * `cookie=<value>` (repeatable) → 200 with those Set-Cookie values; `/hop` → hop-by-hop headers;
 * `/status/<n>` → that status with a body.
 */
function scripted(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://upstream');
  const location = url.searchParams.get('location');
  if (location !== null) {
    res.writeHead(302, { location, 'content-length': 0 }).end();
  } else if (url.searchParams.has('cookie')) {
    res.writeHead(200, { 'set-cookie': url.searchParams.getAll('cookie'), 'content-length': 2 }).end('ok');
  } else if (url.pathname.endsWith('/hop')) {
    res.writeHead(200, {
      connection: 'close, X-Hop',
      'x-hop': 'secret',
      'keep-alive': 'timeout=99',
      'proxy-authenticate': 'Basic realm="upstream"',
      trailer: 'X-Checksum',
      upgrade: 'h2c',
      'x-end-to-end': 'kept',
    });
    res.write('hop');
    res.addTrailers({ 'x-checksum': 'abc' });
    res.end();
  } else if (url.pathname.includes('/status/')) {
    const status = Number(url.pathname.split('/status/')[1]);
    res.writeHead(status, 'Custom Reason', { 'content-type': 'text/plain', 'x-upstream': 'yes' });
    res.end(status === 204 || status === 304 ? undefined : `status ${status}`);
  } else {
    res.writeHead(404).end();
  }
}

describe('response headers returned to the client', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream(scripted);
    gateway = await startDataPlane({
      services: [
        service({ path: '/app', targetUrl: `${upstream.origin}/base` }),
        service({ path: '/plain', targetUrl: upstream.origin }),
        service({ path: '/', targetUrl: upstream.origin }),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  async function locationFor(prefix: string, location: string): Promise<string | undefined> {
    const response = await gateway.fetch(`${prefix}/go?location=${encodeURIComponent(location)}`);
    assert.equal(response.status, 302);
    return response.headers.location as string | undefined;
  }

  it('moves a Location on the target under its base path into the public prefix', async () => {
    const origin = upstream.origin;
    const cases: [string, string][] = [
      [`${origin}/base/x?y=1`, '/app/x?y=1'],
      [`${origin}/base`, '/app'],
      [`${origin}/base/`, '/app/'],
      [`${origin}/base?next=1`, '/app?next=1'],
      [`${origin.toUpperCase()}/base/x`, '/app/x'],
      ['/base/x/y', '/app/x/y'],
      ['/base', '/app'],
      ['/base#frag', '/app#frag'],
    ];
    for (const [location, expected] of cases) assert.equal(await locationFor('/app', location), expected, location);
  });

  it('leaves any other Location alone', async () => {
    const origin = upstream.origin;
    for (const location of [
      '/basement/x',
      '/other/x',
      'relative/x',
      '../up',
      `${origin}/basement`,
      'https://elsewhere.example/base/x',
      '//elsewhere.example/base/x',
      `http://127.0.0.1:1/base/x`,
    ]) {
      assert.equal(await locationFor('/app', location), location);
    }
  });

  it('maps every absolute path and target URL when the target has no base path', async () => {
    assert.equal(await locationFor('/plain', '/x?y'), '/plain/x?y');
    assert.equal(await locationFor('/plain', '/'), '/plain/');
    assert.equal(await locationFor('/plain', `${upstream.origin}/x`), '/plain/x');
    assert.equal(await locationFor('/plain', upstream.origin), '/plain/');
    assert.equal(await locationFor('', '/x'), '/x', 'a root service keeps its paths');
    assert.equal(await locationFor('', `${upstream.origin}/x`), '/x');
  });

  it('never maps a Location on the target to a scheme-relative one (an open redirect)', async () => {
    const origin = upstream.origin;
    const cases: [prefix: string, location: string, expected: string][] = [
      ['', `${origin}//evil.example/x`, '/evil.example/x'],
      ['', `${origin}///evil.example/x?y`, '/evil.example/x?y'],
      ['', `${origin}/\\evil.example`, '/evil.example'],
      ['', `${origin}/\\/evil.example/x`, '/evil.example/x'],
      ['', `${origin}/\t/evil.example`, '/evil.example'],
      ['/plain', `${origin}//evil.example/x`, '/plain//evil.example/x'],
      ['/plain', `${origin}/\\evil.example`, '/plain/\\evil.example'],
      ['/app', `${origin}/base//evil.example/x`, '/app//evil.example/x'],
      ['/app', '/base/\\evil.example', '/app/\\evil.example'],
    ];
    for (const [prefix, location, expected] of cases) {
      const mapped = await locationFor(prefix, location);
      assert.equal(mapped, expected, `${prefix || '/'}: ${location}`);
      assert.doesNotMatch(mapped!, /^[/\\\t]{2}/);
    }
  });

  async function cookiesFor(prefix: string, values: string[]): Promise<string[]> {
    const query = values.map((value) => `cookie=${encodeURIComponent(value)}`).join('&');
    const response = await gateway.fetch(`${prefix}/c?${query}`);
    assert.equal(response.status, 200);
    const header = response.headers['set-cookie'];
    return header === undefined ? [] : Array.isArray(header) ? header : [header];
  }

  it('moves Set-Cookie paths into the prefix', async () => {
    assert.deepEqual(
      await cookiesFor('/app', [
        'a=1; Path=/base/x; HttpOnly',
        'b=2; path=/base',
        'c=3; Path=/base/; Secure',
        'd=4; Path=/',
        'e=5; Path=/elsewhere',
        'f=6; Max-Age=60',
      ]),
      [
        'a=1; Path=/app/x; HttpOnly',
        'b=2; Path=/app',
        'c=3; Path=/app; Secure',
        'd=4; Path=/app',
        'e=5; Path=/app',
        'f=6; Max-Age=60; Path=/app',
      ],
    );
    assert.deepEqual(await cookiesFor('/plain', ['a=1; Path=/', 'b=2; Path=/sub; SameSite=Lax']), [
      'a=1; Path=/plain',
      'b=2; Path=/plain/sub; SameSite=Lax',
    ]);
    assert.deepEqual(await cookiesFor('', ['a=1; Path=/', 'b=2; Path=/x']), ['a=1; Path=/', 'b=2; Path=/x']);
  });

  it('scopes a Set-Cookie without a Path to the prefix, and leaves the root service its default', async () => {
    // RFC 6265 §5.1.4: without Path, a browser scopes a cookie set by /plain/c to /, every service.
    assert.deepEqual(await cookiesFor('/plain', ['a=1', 'b=2; HttpOnly; SameSite=Lax', 'c=3; Path', 'd=4; Path=']), [
      'a=1; Path=/plain',
      'b=2; HttpOnly; SameSite=Lax; Path=/plain',
      'c=3; Path; Path=/plain',
      'd=4; Path=/plain',
    ]);
    assert.deepEqual(await cookiesFor('/app', ['a=1; Secure']), ['a=1; Secure; Path=/app']);
    assert.deepEqual(await cookiesFor('', ['a=1', 'b=2; HttpOnly']), ['a=1', 'b=2; HttpOnly']);
  });

  it('drops any Set-Cookie that names a gateway cookie', async () => {
    const cookies = await cookiesFor('/plain', [
      'gw_session=forged; Path=/',
      '__Host-gw_session=forged; Path=/; Secure',
      'gw_oidc=forged',
      '__Host-gw_oidc=forged; Secure; Path=/',
      'mine=1; Path=/',
    ]);
    assert.deepEqual(cookies, ['mine=1; Path=/plain']);
    assert.deepEqual(await cookiesFor('/plain', ['gw_session=forged']), []);
  });

  it('drops hop-by-hop response headers and those named in Connection', async () => {
    const response = await gateway.fetch('/plain/hop');
    assert.equal(response.status, 200);
    assert.equal(response.text, 'hop');
    assert.equal(response.headers['x-end-to-end'], 'kept');
    assert.equal(response.headers['x-hop'], undefined);
    assert.equal(response.headers['proxy-authenticate'], undefined);
    assert.equal(response.headers.trailer, 'X-Checksum'); // end-to-end (RFC 9110 §6.6.2), see trailers.test.ts
    assert.equal(response.headers.upgrade, undefined);
    assert.notEqual(response.headers['keep-alive'], 'timeout=99');
    assert.notEqual(response.headers.connection, 'close, X-Hop');
  });

  it('returns the status, reason and body the target gives', async () => {
    for (const status of [200, 201, 204, 400, 404, 418, 500, 503, 599]) {
      const response = await gateway.fetch(`/plain/status/${status}`);
      assert.equal(response.status, status);
      assert.equal(response.headers['x-upstream'], 'yes');
      assert.equal(response.text, status === 204 ? '' : `status ${status}`);
    }
    const raw = await rawRequest(gateway.port, 'GET /plain/status/418 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    assert.equal(raw.statusLine, 'HTTP/1.1 418 Custom Reason');
  });
});
