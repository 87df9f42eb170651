/**
 * The request-head checks of both listeners (shared/http/request-head.ts), over raw TCP because no HTTP
 * client sends two Host fields: RFC 9112 §3.2 (two Host fields → 400) and the 100-field limit
 * (431), on the public listener's plain, `Expect: 100-continue` and upgrade requests and on the
 * admin port; and the gateway's own headers surviving an upstream that keeps only its first fields.
 */
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { MAX_HEADER_FIELDS } from '../../shared/http/request-head.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { headerPadding, rawRequest, type RawResponse } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/** A raw request: `requestLine`, then `lines`, then the blank line ending the head. */
function head(requestLine: string, lines: string[]): string {
  return `${[requestLine, ...lines].join('\r\n')}\r\n\r\n`;
}

const WEBSOCKET = ['Connection: Upgrade', 'Upgrade: websocket', 'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=='];

/** Asserts the gateway's JSON error, with nothing sent before it (no `100 Continue`), and a closed connection. */
function assertRefused(response: RawResponse, statusLine: string, error: string): void {
  assert.equal(response.statusLine, statusLine);
  assert.deepEqual(JSON.parse(response.body), { error });
  assert.ok(response.headers.some(([name, value]) => name === 'connection' && value === 'close'));
}

describe('request heads refused by every listener', { timeout: 10_000 }, () => {
  let gateway: TestGateway;
  let publicPort: number;
  let adminPort: number;

  before(async () => {
    gateway = await startTestGateway();
    publicPort = gateway.gateway.port;
    adminPort = gateway.gateway.adminPort;
  });
  after(() => gateway.close());

  describe('two Host fields: 400 (RFC 9112 §3.2)', () => {
    const twoHosts = [
      ['Host: a.example', 'Host: b.example'],
      ['Host: a.example', 'host: a.example'],
      ['HOST: a.example', 'X-Other: 1', 'hOsT: b.example'],
    ];

    it('on a plain request to the public listener, whatever the case and values', async () => {
      for (const hosts of twoHosts) {
        const response = await rawRequest(publicPort, head('GET /api/services HTTP/1.1', hosts));
        assertRefused(response, 'HTTP/1.1 400 Bad Request', 'Bad request');
      }
    });

    it('on an Expect: 100-continue request, before any 100 Continue', async () => {
      const lines = ['Host: a.example', 'Host: b.example', 'Expect: 100-continue', 'Content-Length: 4'];
      const response = await rawRequest(publicPort, head('POST /api/services HTTP/1.1', lines));
      assertRefused(response, 'HTTP/1.1 400 Bad Request', 'Bad request');
    });

    it('on a WebSocket upgrade request, then the socket closes', async () => {
      const response = await rawRequest(publicPort, head('GET / HTTP/1.1', ['Host: a.example', 'Host: b.example', ...WEBSOCKET]));
      assertRefused(response, 'HTTP/1.1 400 Bad Request', 'Bad request');
    });

    it('on the admin port', async () => {
      const response = await rawRequest(adminPort, head('GET /api/services HTTP/1.1', ['Host: a.example', 'Host: b.example']));
      assertRefused(response, 'HTTP/1.1 400 Bad Request', 'Bad request');
    });

    it('while one Host field passes', async () => {
      const response = await rawRequest(adminPort, head('GET /healthz HTTP/1.1', ['Host: a.example', 'Connection: close']));
      assert.equal(response.status, 200);
    });
  });

  describe(`more than ${MAX_HEADER_FIELDS} header fields: 431`, () => {
    const tooMany = ['Host: a.example', ...headerPadding(MAX_HEADER_FIELDS)];
    const refused = (response: RawResponse) =>
      assertRefused(response, 'HTTP/1.1 431 Request Header Fields Too Large', 'Request header fields too large');

    it(`refuses ${MAX_HEADER_FIELDS + 1} fields on the public listener: plain, Expect: 100-continue and upgrade requests`, async () => {
      refused(await rawRequest(publicPort, head('GET /api/services HTTP/1.1', tooMany)));
      refused(await rawRequest(publicPort, head('POST /api/services HTTP/1.1', [...tooMany.slice(0, -2), 'Expect: 100-continue', 'Content-Length: 4'])));
      refused(await rawRequest(publicPort, head('GET / HTTP/1.1', [...tooMany.slice(0, -WEBSOCKET.length), ...WEBSOCKET])));
    });

    it('refuses 2,000 small fields, which Node would otherwise truncate silently', async () => {
      refused(await rawRequest(publicPort, head('GET /api/services HTTP/1.1', ['Host: a.example', ...Array<string>(2_000).fill('p: 1')])));
    });

    it(`refuses ${MAX_HEADER_FIELDS + 1} fields on the admin port`, async () => {
      refused(await rawRequest(adminPort, head('GET /healthz HTTP/1.1', tooMany)));
    });

    it(`serves exactly ${MAX_HEADER_FIELDS} fields on both listeners`, async () => {
      const lines = ['Host: a.example', 'Connection: close', ...headerPadding(MAX_HEADER_FIELDS - 2)];
      assert.equal((await rawRequest(publicPort, head('GET /api/services HTTP/1.1', lines))).status, 401);
      assert.equal((await rawRequest(adminPort, head('GET /healthz HTTP/1.1', lines))).status, 200);
    });
  });
});

describe("the gateway's own headers reach an upstream that keeps only its first fields", { timeout: 10_000 }, () => {
  /** Node's default is 2,000; an upstream keeping 20 stands for any limit below what a client may send. */
  const UPSTREAM_FIELD_LIMIT = 20;
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream((req, res) => res.end(JSON.stringify(req.headers)));
    upstream.server.maxHeadersCount = UPSTREAM_FIELD_LIMIT;
    gateway = await startDataPlane({ services: [service({ path: '/app', targetUrl: upstream.origin })] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it(`sees X-Forwarded-For/Proto/Host/Prefix/User/Email behind ${MAX_HEADER_FIELDS} client fields`, async () => {
    const cookie = await gateway.signIn({ sub: 'padded-sub', email: 'padded@example.com' });
    const lines = ['Host: a.example', 'Connection: close', `Cookie: ${cookie}`, ...headerPadding(MAX_HEADER_FIELDS - 3)];
    const response = await rawRequest(gateway.port, head('GET /app/x HTTP/1.1', lines));
    assert.equal(response.status, 200);
    const seen = JSON.parse(response.body) as IncomingHttpHeaders;
    assert.equal(seen['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen['x-forwarded-proto'], 'http');
    assert.equal(seen['x-forwarded-host'], gateway.config.publicUrl.host);
    assert.equal(seen['x-forwarded-prefix'], '/app');
    assert.equal(seen['x-forwarded-user'], 'padded-sub');
    assert.equal(seen['x-forwarded-email'], 'padded@example.com');
    assert.equal(seen['x-pad-0'], '0', 'the client fields that fit follow');
  });
});
