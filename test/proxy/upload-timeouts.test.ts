/**
 * UPSTREAM_TIMEOUT with request bodies: an upload slower than the timeout still goes through (the
 * wait for the response starts once the body has arrived); a target that then stays silent gets
 * 504; a client that stops sending mid-body gets 408 and the target's request is dropped.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { service } from '../support/samples.js';
import { echo, startUpstream, type Echo, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

const TIMEOUT_MS = 300;
const CHUNK = 'y'.repeat(1024);

/**
 * Opens a POST of `chunks` × 1 KiB to `path`, sending one chunk every `gapMs`, then (unless
 * `stallAfter` chunks were sent) the rest; resolves with the raw reply once the gateway closes
 * the connection or the reply is complete.
 */
async function upload(port: number, path: string, chunks: number, gapMs: number, stallAfter = chunks): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let reply = '';
  socket.on('data', (data: string) => (reply += data));
  const closed = once(socket, 'close');
  socket.write(`POST ${path} HTTP/1.1\r\nHost: gateway.test\r\nContent-Type: text/plain\r\nContent-Length: ${chunks * CHUNK.length}\r\n\r\n`);
  for (let i = 0; i < stallAfter; i++) {
    await delay(gapMs); // the pacing is what is under test
    if (socket.destroyed) break;
    socket.write(CHUNK);
  }
  const complete = async () => {
    while (!/\r\n\r\n/.test(reply) || reply.length < reply.indexOf('\r\n\r\n') + 4 + Number(/content-length: (\d+)/i.exec(reply)?.[1] ?? 0)) {
      await Promise.race([once(socket, 'data'), closed]);
      if (socket.destroyed) break;
    }
  };
  await complete();
  socket.destroy();
  return reply;
}

describe('request bodies and UPSTREAM_TIMEOUT', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  const silentRequests: IncomingMessage[] = [];

  before(async () => {
    upstream = await startUpstream((req, res) => {
      if (req.url !== '/silent') return echo(req, res);
      silentRequests.push(req);
      req.resume(); // reads the whole body, then never answers
    });
    gateway = await startDataPlane({ env: { UPSTREAM_TIMEOUT: `${TIMEOUT_MS}ms` }, services: [service({ path: '/up', targetUrl: upstream.origin })] });
  });
  after(async () => {
    await gateway.close();
    await upstream.close();
  });

  it('an upload that takes longer than UPSTREAM_TIMEOUT but never pauses that long is forwarded whole', async () => {
    const reply = await upload(gateway.port, '/up/slow', 6, TIMEOUT_MS / 3); // ~600 ms in all
    assert.match(reply, /^HTTP\/1.1 200 /);
    const received = JSON.parse(reply.slice(reply.indexOf('\r\n\r\n') + 4)) as Echo;
    assert.equal(received.bodyBytes, 6 * CHUNK.length);
  });

  it('a target silent for UPSTREAM_TIMEOUT after the whole body arrived gets 504', async () => {
    const started = Date.now();
    const reply = await upload(gateway.port, '/up/silent', 2, 10);
    assert.match(reply, /^HTTP\/1.1 504 /);
    assert.ok(Date.now() - started >= TIMEOUT_MS, 'not before the timeout');
    assert.equal(silentRequests.length, 1);
  });

  it('a client that stops sending its body gets 408, its connection is closed and the target request dropped', async () => {
    const reply = await upload(gateway.port, '/up/silent', 4, 10, 2);
    assert.match(reply, /^HTTP\/1.1 408 /);
    assert.match(reply, /\{"error":"Request timeout"\}/);
    const record = await gateway.waitForRecord((r) => r.statusCode === 408);
    assert.equal(record.path, '/up/silent');
    assert.equal(silentRequests.length, 2);
    const dropped = silentRequests[1]!.socket;
    if (!dropped.destroyed) await once(dropped, 'close');
  });
});
