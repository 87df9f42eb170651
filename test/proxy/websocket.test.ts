import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import net, { type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { openRawConnection } from '../support/raw-connection.js';
import { service } from '../support/samples.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const WEBSOCKET_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const KEY = 'dGhlIHNhbXBsZSBub25jZQ==';

/** Sec-WebSocket-Accept for a key (RFC 6455 §4.2.2). */
function accept(key: string): string {
  return createHash('sha1').update(key + WEBSOCKET_GUID).digest('base64');
}

/** One short text frame (payload < 126 bytes); clients mask theirs (RFC 6455 §5.3). */
function frame(text: string, masked: boolean): Buffer {
  const payload = Buffer.from(text);
  if (!masked) return Buffer.concat([Buffer.from([0x81, payload.length]), payload]);
  const mask = Buffer.from([1, 2, 3, 4]);
  const body = payload.map((byte, i) => byte ^ mask[i % 4]!);
  return Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, body]);
}

/** The text of one short frame, unmasking it when masked. */
function readFrame(data: Buffer): string {
  const length = data[1]! & 0x7f;
  if ((data[1]! & 0x80) === 0) return data.subarray(2, 2 + length).toString();
  const mask = data.subarray(2, 6);
  return Buffer.from(data.subarray(6, 6 + length).map((byte, i) => byte ^ mask[i % 4]!)).toString();
}

/** Upstream handshakes seen, with the upstream side of each socket. */
interface Handshake {
  req: IncomingMessage;
  socket: Duplex;
}

/** A client socket after its handshake: the response head, and the bytes that came after it. */
interface Opened {
  socket: Socket;
  status: number;
  head: string;
  rest: Buffer;
}

async function openHandshake(port: number, target: string, extra: string[] = []): Promise<Opened> {
  const socket = net.connect(port, '127.0.0.1');
  const lines = [
    `GET ${target} HTTP/1.1`,
    'Host: public.example',
    'Connection: Upgrade',
    'Upgrade: websocket',
    `Sec-WebSocket-Key: ${KEY}`,
    'Sec-WebSocket-Version: 13',
    ...extra,
  ];
  socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  let received = Buffer.alloc(0);
  while (!received.includes('\r\n\r\n')) {
    const [chunk] = (await Promise.race([once(socket, 'data'), once(socket, 'close').then(() => [Buffer.alloc(0)])])) as [Buffer];
    if (chunk.length === 0) break;
    received = Buffer.concat([received, chunk]);
  }
  const end = received.indexOf('\r\n\r\n');
  const head = received.subarray(0, end).toString('latin1');
  return { socket, status: Number(head.split(' ')[1]), head, rest: received.subarray(end + 4) };
}

describe('WebSocket upgrades', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  const handshakes: Handshake[] = [];
  const ws = service({ path: '/ws', targetUrl: '' });

  before(async () => {
    upstream = await startUpstream((_req, res) => res.writeHead(200).end('plain'));
    upstream.server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
      handshakes.push({ req, socket });
      if (req.url?.includes('refuse')) {
        socket.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\nConnection: close\r\n\r\nno way');
        return;
      }
      const key = String(req.headers['sec-websocket-key']);
      socket.write(
        'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
          `Sec-WebSocket-Accept: ${accept(key)}\r\nSet-Cookie: gw_session=forged\r\n\r\n`,
      );
      socket.on('data', (data: Buffer) => socket.write(frame(`echo: ${readFrame(data)}`, false)));
    });
    ws.targetUrl = `${upstream.origin}/base`;
    gateway = await startDataPlane({
      services: [ws, service({ path: '/private-ws', targetUrl: upstream.origin, requireAuth: true })],
    });
  });
  after(async () => {
    for (const { socket } of handshakes) socket.destroy();
    await gateway.close();
    await upstream.close();
  });

  it('switches protocols end to end and relays frames both ways', async () => {
    const opened = await openHandshake(gateway.port, '/ws/socket?room=1', ['X-Forwarded-User: evil']);
    try {
      assert.equal(opened.status, 101, opened.head);
      assert.match(opened.head, new RegExp(`sec-websocket-accept: ${accept(KEY).replace(/[+/=]/g, '\\$&')}`, 'i'));
      assert.match(opened.head, /^upgrade: websocket$/im);
      assert.doesNotMatch(opened.head, /gw_session/, 'a gateway cookie set by the target is dropped');

      const handshake = handshakes.at(-1)!;
      assert.equal(handshake.req.url, '/base/socket?room=1');
      assert.equal(handshake.req.headers['x-forwarded-user'], undefined);
      assert.equal(handshake.req.headers['x-forwarded-prefix'], '/ws');
      assert.equal(handshake.req.headers['sec-websocket-key'], KEY);

      opened.socket.write(frame('hello', true));
      const [reply] = (await once(opened.socket, 'data')) as [Buffer];
      assert.equal(readFrame(reply), 'echo: hello');
    } finally {
      opened.socket.destroy();
    }
  });

  it('switches a handshake for exactly the prefix at the base path: WebSocket clients follow no redirect', async () => {
    const opened = await openHandshake(gateway.port, '/ws?room=2');
    try {
      assert.equal(opened.status, 101, opened.head);
      assert.equal(handshakes.at(-1)!.req.url, '/base?room=2');
    } finally {
      opened.socket.destroy();
    }
  });

  it('closes the upstream connection when the client leaves, and logs the session as 101', { timeout: 5_000 }, async () => {
    const opened = await openHandshake(gateway.port, '/ws/leave');
    assert.equal(opened.status, 101);
    const upstreamSocket = handshakes.at(-1)!.socket;
    const upstreamEnded = once(upstreamSocket, 'end'); // the gateway closed its side
    opened.socket.destroy();
    await upstreamEnded;
    const record = await gateway.waitForRecord((entry) => entry.path === '/ws/leave');
    assert.equal(record.statusCode, 101);
    assert.equal(record.serviceId, ws.id);
    assert.equal(gateway.records.filter((entry) => entry.path === '/ws/leave').length, 1);
  });

  it('applies the same rules as any request: 401 without a session, 404 without a service, 400 for dot segments', async () => {
    for (const [target, status] of [
      ['/private-ws/socket', 401],
      ['/nowhere', 404],
      ['/ws/%2e%2e/x', 400],
    ] as const) {
      const opened = await openHandshake(gateway.port, target);
      assert.equal(opened.status, status, target);
      opened.socket.destroy();
    }
  });

  it("relays the target's refusal as it is", async () => {
    const opened = await openHandshake(gateway.port, '/ws/refuse');
    assert.equal(opened.status, 403);
    opened.socket.destroy();
  });

  it('forwards a session identity on a protected service', async () => {
    const cookie = await gateway.signIn({ sub: 'ws-user', email: 'ws@example.com' });
    const opened = await openHandshake(gateway.port, '/private-ws/socket', [`Cookie: ${cookie}`]);
    assert.equal(opened.status, 101);
    const { req } = handshakes.at(-1)!;
    assert.equal(req.headers['x-forwarded-user'], 'ws-user');
    assert.equal(req.headers.cookie, undefined);
    opened.socket.destroy();
  });

  it('serves a handshake pipelined behind a request still being answered once that answer is done', { timeout: 5_000 }, async () => {
    const connection = await openRawConnection(gateway.port);
    connection.write(
      'GET /ws/page HTTP/1.1\r\nHost: a\r\n\r\n' +
        `GET /ws/chat HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: ${KEY}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    const page = await connection.next();
    assert.deepEqual([page.status, page.body], [200, 'plain']);
    const switched = await connection.next();
    assert.equal(switched.status, 101);
    assert.deepEqual(switched.headers.find(([name]) => name === 'sec-websocket-accept'), ['sec-websocket-accept', accept(KEY)]);
    connection.close();
  });

  it('hands a handshake on a gateway path to the admin plane', async () => {
    const opened = await openHandshake(gateway.port, '/dashboard/live');
    assert.equal(opened.status, 200);
    assert.equal(gateway.adminRequests.at(-1), '/dashboard/live');
    opened.socket.destroy();
  });

  it('closes open tunnels on closeAll, as a stopping gateway does', { timeout: 5_000 }, async () => {
    const opened = await openHandshake(gateway.port, '/ws/stay');
    assert.equal(opened.status, 101);
    const clientClosed = once(opened.socket, 'close');
    gateway.upgrades.closeAll();
    await clientClosed;
  });
});
