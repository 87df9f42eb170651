/**
 * The data plane's rules (design.md §3.6–3.7) hold alike over HTTP/1.1 and HTTP/2 on the TLS
 * listener: the same cases, run once per protocol. Every spelling of a path (case, encoded
 * slashes and letters, `;`, `//`, dot segments, NUL) is routed over HTTP/2 exactly as over
 * HTTP/1.1, sent as written by both clients. Fields a client must not pass on are removed
 * (spoofed identity and forwarding fields, the gateway's cookies, `TE`, the request id, and over
 * HTTP/2 its pseudo-header fields and split cookies sent as one field), `Location` and
 * `Set-Cookie` are mapped under the prefix, a target's trailer fields reach the client, and large
 * bodies stream both ways.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import type { ClientHttp2Session, IncomingHttpHeaders } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createService } from '../support/api-client.js';
import { freePort } from '../support/free-port.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { makeTestCa } from '../support/test-certificates.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { echo, headerValues, startUpstream, type Echo, type Upstream } from '../support/upstream.js';
import { gatewayCookieNames } from '../../shared/http/cookies.js';

/** Bytes of the large bodies streamed each way. */
const LARGE = 48 * 1024 * 1024;

/** One answer as a test reads it, whichever the protocol. */
interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: IncomingHttpHeaders;
}

/** A request as a test sends it: a method, a path, fields, and a body (bytes, or a stream). */
interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string | string[]>;
  body?: Buffer | Readable;
}

type Client = (sent: Sent) => Promise<Answer>;

let dir: string;
let caPem: Buffer;
let gw: TestGateway;
let target: Upstream;
let origin: string;
let session: ClientHttp2Session;
let agent: HttpsAgent;
const received: Echo[] = [];

/** `count` bytes of a repeating pattern, streamed in 64 KiB chunks. */
function largeBody(count: number): Readable {
  const chunk = Buffer.alloc(64 * 1024, 'gatehouse ');
  let left = count;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const size = Math.min(left, chunk.length);
      left -= size;
      this.push(size === chunk.length ? chunk : chunk.subarray(0, size));
    },
  });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-h2-rules-'));
  const ca = makeTestCa(dir);
  caPem = readFileSync(ca.caFile);
  const pair = ca.issue('default', ['localhost']);
  target = await startUpstream((req, res) => {
    if (req.url === '/base/redirect') {
      res.writeHead(302, { location: `${target.origin}/base/next?q=1`, 'set-cookie': ['plain=1', 'scoped=2; Path=/base/area', `${gatewayCookieNames(new URL(origin)).session}=forged`], 'content-length': 0 });
      return void res.end();
    }
    if (req.url === '/base/trailers') {
      res.writeHead(200, { 'content-type': 'text/plain', trailer: 'x-body-sha256' });
      res.write('streamed ');
      res.addTrailers({ 'x-body-sha256': createHash('sha256').update('streamed body').digest('hex'), 'set-cookie': 'sneaky=1' });
      return void res.end('body');
    }
    if (req.url === '/base/large') {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      return void largeBody(LARGE).pipe(res);
    }
    echo(req, res, received);
  });
  const port = await freePort();
  origin = `https://localhost:${port}`;
  gw = await startTestGateway({ PORT: String(port), PUBLIC_URL: origin, TLS_CERT_FILE: pair.cert, TLS_KEY_FILE: pair.key });
  await createService(gw.adminUrl, await signIn(gw), { name: 'Svc', path: '/svc', targetUrl: `${target.origin}/base`, requireAuth: false });
  session = await openSession(origin, { ca: caPem });
  agent = new HttpsAgent({ ca: caPem, keepAlive: true });
});

after(async () => {
  session?.close();
  agent?.destroy();
  await gw?.close();
  await target?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Over HTTP/1.1 (node:https, which offers no ALPN: the server's fallback), the path sent as written (a URL would normalise it). */
const overHttp1: Client = (sent) =>
  new Promise((resolve, reject) => {
    const { hostname, port } = new URL(origin);
    const req = httpsRequest({ hostname, port, path: sent.path, method: sent.method ?? 'GET', headers: sent.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks), trailers: res.trailers }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (sent.body instanceof Readable) sent.body.pipe(req);
    else req.end(sent.body);
  });

/** Over HTTP/2 (one node:http2 session for every request). */
const overHttp2: Client = (sent) => http2Request(session, { ':method': sent.method ?? 'GET', ':path': sent.path, ...sent.headers }, sent.body);

/** Spellings of paths under and beside the prefix `/svc` that the routing key (design.md §3.2) reads one way or another. */
const SPELLINGS = ['/svc/a', '/SVC/a', '/Svc/a', '/svc/a%2Fb', '/svc%2Fa', '/svc%2fa', '/%73vc/a', '/svc;x/a', '/svc//a', '//svc/a', '/svc/./a', '/x/../svc/a', '/svc%00/a', '/svc%252Fa', '/svc.'];

describe('the routing key over both protocols', () => {
  test('every spelling of a path is routed over HTTP/2 as over HTTP/1.1: the same status, the same request at the target', async () => {
    const outcome = async (send: Client, path: string) => {
      const before = received.length;
      const answer = await send({ path }).catch((error: Error) => ({ status: `refused: ${error.message}` }));
      return { status: answer.status, forwarded: received.slice(before).map((seen) => seen.url) };
    };
    for (const path of SPELLINGS) {
      const [h1, h2] = [await outcome(overHttp1, path), await outcome(overHttp2, path)];
      if (typeof h2.status === 'string') assert.deepEqual(h2.forwarded, [], `${path}: refused over HTTP/2 (${h2.status}), so nothing may reach the target`);
      else assert.deepEqual(h2, h1, path);
    }
  });
});

for (const [protocol, send] of [['HTTP/1.1', overHttp1], ['HTTP/2', overHttp2]] as const) {
  describe(`over ${protocol}`, () => {
    test('fields a client must not pass on are removed; the gateway\'s own are set', async () => {
      const names = gatewayCookieNames(new URL(origin));
      const answer = await send({
        path: '/svc/fields',
        headers: {
          'x-forwarded-user': 'mallory',
          'x-forwarded-for': '203.0.113.9',
          'x-request-id': 'client-chosen',
          te: 'trailers',
          // two fields: HTTP/2 clients split cookies (RFC 9113 §8.2.3); the target gets one
          cookie: [`${names.session}=secret; app=1`, 'other=2'],
          'x-app': 'kept',
        },
      });
      assert.equal(answer.status, 200);
      const seen = received.at(-1)!;
      assert.deepEqual(headerValues(seen, 'x-forwarded-user'), []);
      assert.deepEqual(headerValues(seen, 'x-forwarded-for'), ['127.0.0.1']);
      assert.deepEqual(headerValues(seen, 'x-forwarded-proto'), ['https']);
      assert.deepEqual(headerValues(seen, 'x-request-id'), [String(answer.headers['x-request-id'])]);
      assert.deepEqual(headerValues(seen, 'te'), []);
      assert.deepEqual(headerValues(seen, 'cookie'), ['app=1; other=2']);
      assert.deepEqual(headerValues(seen, 'x-app'), ['kept']);
      assert.ok(!seen.headers.some(([name]) => name.startsWith(':')), 'no pseudo-header field');
    });

    test('Location and Set-Cookie are mapped under the prefix; a forged gateway cookie is dropped', async () => {
      const answer = await send({ path: '/svc/redirect' });
      assert.equal(answer.status, 302);
      assert.equal(answer.headers.location, '/svc/next?q=1');
      assert.deepEqual(answer.headers['set-cookie'], ['plain=1; Path=/svc', 'scoped=2; Path=/svc/area']);
    });

    test('a target\'s trailer fields reach the client, but a Set-Cookie among them', async () => {
      const answer = await send({ path: '/svc/trailers' });
      assert.equal(answer.body.toString(), 'streamed body');
      assert.equal(answer.trailers['x-body-sha256'], createHash('sha256').update('streamed body').digest('hex'));
      assert.equal(answer.trailers['set-cookie'], undefined);
    });

    test(`a ${LARGE / 1024 / 1024} MiB body streams up to the target and another down to the client`, async () => {
      const up = await send({ method: 'POST', path: '/svc/upload', headers: { 'content-type': 'application/octet-stream' }, body: largeBody(LARGE) });
      assert.equal(up.status, 200);
      assert.equal((JSON.parse(up.body.toString()) as Echo).bodyBytes, LARGE);
      const down = await send({ path: '/svc/large' });
      assert.equal(down.status, 200);
      assert.equal(down.body.length, LARGE);
    });
  });
}
