/**
 * design.md §3.7: trailer fields (RFC 9110 §6.5) through the gateway, over raw TCP so the trailer
 * section is seen as it is on the wire. A target's trailers reach the client with the `Trailer`
 * header that announced them whenever the client's response is chunked; a chunked request's
 * announced trailers reach the target, except those that could carry past the gateway what it
 * decides on (credentials, identity, framing).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../support/free-port.js';
import { rawRequest } from '../support/raw-connection.js';
import { openRawConnection, type RawExchange } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { rawUpstream, startUpstream, type RawUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

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
  let gateway: TestDataPlane;

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
    gateway = await startDataPlane({
      services: [
        service({ path: '/app', targetUrl: target.origin }),
        service({ path: '/gone', targetUrl: `http://127.0.0.1:${await freePort()}` }),
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

  /** Sends a chunked upload of BODY to `path` with `head` fields and the `trailer` section. */
  async function upload(path: string, head: string, trailer: string): Promise<RawExchange> {
    const connection = await openRawConnection(gateway.port);
    const chunks = [BODY.slice(0, 7), BODY.slice(7)].map((chunk) => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    connection.write(`POST ${path} HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n${head}\r\n${chunks}0\r\n${trailer}\r\n`);
    const response = await connection.next();
    connection.close();
    return response;
  }

  it("forwards a chunked request body whole with the trailer fields its Trailer announced, and that Trailer", async () => {
    const response = await upload('/app/upload', 'Trailer: x-body-sha256\r\n', `x-body-sha256: ${SHA256}\r\n`);
    assert.equal(response.status, 200);
    assert.deepEqual(JSON.parse(response.body), {
      trailerHeader: 'x-body-sha256',
      trailers: { 'x-body-sha256': SHA256 },
      bodySha256: SHA256,
    } satisfies Received);
  });

  it('never lets a request trailer carry credentials, identity or framing past the gateway, nor an unannounced field', async () => {
    const response = await upload(
      '/app/upload',
      'Trailer: authorization, cookie, x-forwarded-user, X_Forwarded_Email, X_Gatehouse_Assertion, content-type, x-csrf-token, x-body-sha256\r\n',
      'authorization: Bearer forged\r\ncookie: gw_session=stolen\r\nx-forwarded-user: admin\r\nx_forwarded_email: root@example.com\r\n' +
        'x_gatehouse_assertion: forged.jwt.value\r\n' +
        `content-type: text/html\r\nx-csrf-token: t\r\nx-unannounced: 1\r\nx-body-sha256: ${SHA256}\r\n`,
    );
    assert.equal(response.status, 200);
    assert.deepEqual(JSON.parse(response.body), {
      trailerHeader: 'x-body-sha256',
      trailers: { 'x-body-sha256': SHA256 },
      bodySha256: SHA256,
    } satisfies Received);
  });

  it('forwards a chunked request without trailers when nothing it announced may go along', async () => {
    const response = await upload('/app/upload', 'Trailer: authorization\r\n', 'authorization: Bearer forged\r\n');
    assert.equal(response.status, 200);
    assert.deepEqual(JSON.parse(response.body), { trailers: {}, bodySha256: SHA256 } satisfies Received);
  });

  it('answers a trailer-carrying request to an unreachable target 503, as any other', async () => {
    const response = await upload('/gone/upload', 'Trailer: x-body-sha256\r\n', `x-body-sha256: ${SHA256}\r\n`);
    assert.equal(response.status, 503);
    assert.deepEqual(JSON.parse(response.body), { error: 'Service unavailable' });
  });
});
