import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';
import { openRawConnection } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startUpstream, type Upstream } from '../support/upstream.js';

/**
 * A target that answers before the client's body has come (as Express's body limit, nginx's
 * client_max_body_size or a sign-in check do: 413 or 401 without reading): the client gets that
 * answer at once, and its connection is then closed rather than left open with an unread body that
 * nothing reads any more (a hang for the client's next request on it).
 */
describe('a target that answers before the request body has all come', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url === '/upload') res.writeHead(413, { 'content-type': 'text/plain' }).end('too large');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    gateway = await startDataPlane({ services: [service({ path: '/app', targetUrl: upstream.origin, requireAuth: false })] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('relays its answer at once, then closes the connection: the next request is never left hanging', async () => {
    const connection = await openRawConnection(gateway.port);
    try {
      connection.write(`POST /app/upload HTTP/1.1\r\nHost: a.example\r\nContent-Length: 1000000\r\n\r\n${'x'.repeat(64 * 1024)}`);
      const answer = await connection.next();
      assert.equal(answer.status, 413);
      assert.equal(answer.headers.find(([name]) => name === 'connection')?.[1], 'close');
      // The rest of the body, then a second request: answered on this connection, or it is closed.
      connection.write(`${'x'.repeat(1_000_000 - 64 * 1024)}GET /app/next HTTP/1.1\r\nHost: a.example\r\n\r\n`);
      const next = await connection.next().then((response) => response.status, () => 'closed');
      assert.ok(next === 'closed' || next === 200, `after the early answer: ${next}`);
    } finally {
      connection.close();
    }
  });

  it('keeps the connection alive when the body had all come', async () => {
    const connection = await openRawConnection(gateway.port);
    try {
      connection.write('POST /app/upload HTTP/1.1\r\nHost: a.example\r\nContent-Length: 5\r\n\r\nhello');
      assert.equal((await connection.next()).status, 413);
      connection.write('GET /app/next HTTP/1.1\r\nHost: a.example\r\n\r\n');
      assert.equal((await connection.next()).status, 200);
    } finally {
      connection.close();
    }
  });
});
