/**
 * design.md §3.6: an upgrade the gateway does not take (`h2c` from `curl --http2`, RFC 7540 §3.2;
 * any token but `websocket`) is ignored, as RFC 9110 §7.8 lets a server do: the request is served
 * as a plain one with its body, and the connection stays open for the next request. Against the
 * embedded gateway's real public listener.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { useAdminSession } from '../support/admin-session.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { openRawConnection } from '../support/raw-connection.js';

/** What the target saw of a request. */
interface Seen {
  method: string;
  url: string;
  upgrade?: string;
  http2Settings?: string;
  body: string;
}

/** The request `curl --http2 -d x=1 http://gw/svc/x` sends (curl 7.88), byte for byte. */
const CURL_H2C_POST = [
  'POST /svc/x HTTP/1.1',
  'Host: 127.0.0.1',
  'User-Agent: curl/7.88.1',
  'Accept: */*',
  'Connection: Upgrade, HTTP2-Settings',
  'Upgrade: h2c',
  'HTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA',
  'Content-Length: 3',
  'Content-Type: application/x-www-form-urlencoded',
  '',
  'x=1',
].join('\r\n');

const hasCurl = spawnSync('curl', ['--version']).status === 0;

describe('upgrades other than WebSocket are served as plain requests', { timeout: 10_000 }, () => {
  const env = useAdminSession();
  let target: Upstream;
  let switches = 0;

  before(async () => {
    target = await startUpstream((req, res) => {
      let body = '';
      req.setEncoding('latin1').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const seen: Seen = { method: req.method!, url: req.url!, upgrade: req.headers.upgrade, http2Settings: req.headers['http2-settings'] as string | undefined, body };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
      });
    });
    // A target that would switch if it were asked to: it never is.
    target.server.on('upgrade', (_req, socket: Duplex) => {
      switches++;
      socket.end('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n');
    });
    const created = await env.call('POST', '/api/services', {
      as: env.admin,
      json: { name: 'svc', path: '/svc', targetUrl: target.origin, requireAuth: false },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(() => target?.close());

  it("forwards curl --http2's POST with its body and without the upgrade, then serves the next request on the same connection", async () => {
    const connection = await openRawConnection(env.gw.gateway.port);
    connection.write(CURL_H2C_POST);
    const first = await connection.next();
    assert.equal(first.status, 200);
    assert.deepEqual(JSON.parse(first.body), { method: 'POST', url: '/x', body: 'x=1' } satisfies Seen);
    connection.write('GET /svc/next HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    const second = await connection.next();
    assert.equal(second.status, 200);
    assert.equal((JSON.parse(second.body) as Seen).url, '/next');
    assert.equal(connection.closed, false);
    connection.close();
    assert.equal(switches, 0);
  });

  it('serves `Upgrade: foo` and a chunked h2c upload pipelined behind a request still being answered, in order', { timeout: 5_000 }, async () => {
    const connection = await openRawConnection(env.gw.gateway.port);
    connection.write(
      'GET /svc/first HTTP/1.1\r\nHost: a\r\n\r\n' +
        'GET /svc/foo HTTP/1.1\r\nHost: a\r\nConnection: upgrade\r\nUpgrade: foo\r\n\r\n' +
        'PUT /svc/upload HTTP/1.1\r\nHost: a\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n' +
        'Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n',
    );
    const answers = [await connection.next(), await connection.next(), await connection.next()];
    assert.deepEqual(
      answers.map((answer) => [answer.status, JSON.parse(answer.body) as Seen]),
      [
        [200, { method: 'GET', url: '/first', body: '' }],
        [200, { method: 'GET', url: '/foo', body: '' }],
        [200, { method: 'PUT', url: '/upload', body: 'hello world' }],
      ],
    );
    assert.equal(connection.closed, false);
    connection.close();
    assert.equal(switches, 0);
  });

  it('works for curl --http2 -d itself, which reuses the connection for a second URL', { skip: !hasCurl && 'curl is not installed' }, async () => {
    const { stdout } = await promisify(execFile)('curl', [
      '--silent', '--http2', '--data', 'x=1', '--write-out', '\n%{http_code} %{num_connects}\n',
      `${env.gw.origin}/svc/x`, `${env.gw.origin}/svc/y`,
    ]);
    const [firstBody, firstStatus, secondBody, secondStatus] = stdout.trim().split('\n');
    assert.deepEqual(JSON.parse(firstBody!), { method: 'POST', url: '/x', body: 'x=1' } satisfies Seen);
    assert.deepEqual(JSON.parse(secondBody!), { method: 'POST', url: '/y', body: 'x=1' } satisfies Seen);
    assert.equal(firstStatus, '200 1');
    assert.equal(secondStatus, '200 0', 'the second request went over the first connection');
  });
});
