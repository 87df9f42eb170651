/**
 * design.md §3.7: trailer fields (RFC 9110 §6.5) through the gateway, over raw TCP so the trailer
 * section is seen as it is on the wire. A target's trailers reach the client with the `Trailer`
 * header that announced them whenever the client's response is chunked; a request's trailers
 * cannot be relayed (undici ends every chunked request body with an empty trailer section).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { rawRequest } from '../support/raw-connection.js';
import { openRawConnection, type RawExchange } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { rawUpstream, startUpstream, type RawUpstream, type Upstream } from '../support/upstream.js';
import { startGateway, type TestGateway } from './harness.js';

const BODY = 'streamed body, then its digest in a trailer';
const SHA256 = createHash('sha256').update(BODY).digest('hex');

/**
 * Targets announcing trailers (`Trailer`) on responses Node never chunks to the client: each
 * answers one request (`method`) with `reply` as it is; the client must get `status` and `body`.
 */
const NOT_CHUNKED: Record<string, { method: string; reply: string; status: number; body: string }> = {
  '/head': { method: 'HEAD', reply: 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: x-never\r\nConnection: close\r\n\r\n', status: 200, body: '' },
  '/fixed': { method: 'GET', reply: 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTrailer: x-never\r\nConnection: close\r\n\r\nok', status: 200, body: 'ok' },
  '/unmodified': { method: 'GET', reply: 'HTTP/1.1 304 Not Modified\r\nTrailer: x-never\r\nConnection: close\r\n\r\n', status: 304, body: '' },
};

/** What the request-reading target saw. */
interface Received {
  trailerHeader?: string;
  trailers: Record<string, string>;
  bodySha256: string;
}

function header(response: RawExchange, name: string): string | undefined {
  return response.headers.find(([key]) => key === name)?.[1];
}

describe('trailer fields', () => {
  let target: Upstream;
  const announcing: Record<string, RawUpstream> = {};
  let gateway: TestGateway;

  before(async () => {
    target = await startUpstream((req, res) => {
      const hash = createHash('sha256');
      req.on('data', (chunk: Buffer) => hash.update(chunk));
      req.on('end', () => {
        if (req.url === '/digest') {
          // Chunked, with its digest and timing after the body; a Set-Cookie there too.
          res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-body-sha256, server-timing' });
          res.write(BODY.slice(0, 10));
          res.addTrailers({ 'x-body-sha256': SHA256, 'server-timing': 'db;dur=5', 'set-cookie': 'sneaky=1; Path=/' });
          res.end(BODY.slice(10));
          return;
        }
        const received: Received = { trailerHeader: req.headers.trailer, trailers: req.trailers as Record<string, string>, bodySha256: hash.digest('hex') };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received));
      });
    });
    for (const [path, { reply }] of Object.entries(NOT_CHUNKED)) announcing[path] = await rawUpstream(reply);
    gateway = await startGateway({
      services: [
        service({ path: '/app', targetUrl: target.origin }),
        ...Object.entries(announcing).map(([path, upstream]) => service({ path, targetUrl: upstream.origin })),
      ],
    });
  });
  after(async () => {
    await gateway.close();
    await target.close();
    for (const upstream of Object.values(announcing)) await upstream.close();
  });

  it("relays a chunked response's trailer fields and its Trailer header, and the connection serves the next request", async () => {
    const connection = await openRawConnection(gateway.port);
    connection.write('GET /app/digest HTTP/1.1\r\nHost: a\r\nTE: trailers\r\n\r\n');
    const response = await connection.next();
    assert.equal(response.status, 200);
    assert.equal(response.body, BODY);
    assert.equal(header(response, 'transfer-encoding'), 'chunked');
    assert.equal(header(response, 'trailer'), 'x-body-sha256, server-timing');
    // A Set-Cookie trailer would escape the gateway's cookie mapping: not relayed.
    assert.deepEqual(response.trailers, [['x-body-sha256', SHA256], ['server-timing', 'db;dur=5']]);
    connection.write('GET /app/digest HTTP/1.1\r\nHost: a\r\n\r\n');
    assert.deepEqual((await connection.next()).trailers, [['x-body-sha256', SHA256], ['server-timing', 'db;dur=5']]);
    connection.close();
  });

  it('sends no Trailer where the response is not chunked: HEAD, Content-Length, 304, an HTTP/1.0 client', async () => {
    for (const [path, { method, status, body }] of Object.entries(NOT_CHUNKED)) {
      const response = await rawRequest(gateway.port, `${method} ${path}/x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n`);
      assert.deepEqual([response.status, response.body], [status, body], path);
      assert.equal(response.headers.find(([name]) => name === 'trailer'), undefined, path);
    }

    const old = await rawRequest(gateway.port, 'GET /app/digest HTTP/1.0\r\nHost: a\r\n\r\n');
    assert.equal(old.status, 200);
    assert.equal(old.body, BODY); // delimited by the connection's close, so no trailer section
    assert.equal(old.headers.find(([name]) => name === 'trailer'), undefined);
  });

  it("forwards a chunked request body whole, without the client's trailer fields or the Trailer header announcing them", async () => {
    const connection = await openRawConnection(gateway.port);
    const chunks = [BODY.slice(0, 7), BODY.slice(7)].map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    connection.write(
      'POST /app/upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: x-body-sha256\r\n\r\n' +
        `${chunks}0\r\nx-body-sha256: ${SHA256}\r\n\r\n`,
    );
    const response = await connection.next();
    assert.equal(response.status, 200);
    // undici cannot send request trailers; announcing them would promise fields that never come.
    assert.deepEqual(JSON.parse(response.body), { trailers: {}, bodySha256: SHA256 } satisfies Received);
    connection.close();
  });
});
