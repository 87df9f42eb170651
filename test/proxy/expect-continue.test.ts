/**
 * `Expect: 100-continue` (RFC 9110 §10.1.1): the gateway says `100 Continue` only when it is about
 * to forward the request, so a refused upload is refused before its body is sent.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { describe, it } from 'node:test';
import { service } from '../support/samples.js';
import type { Echo } from '../support/upstream.js';
import { useEchoDataPlane } from '../support/echo-data-plane.js';

const BODY = 'x'.repeat(64 * 1024);

/**
 * Sends a POST head with `Expect: 100-continue` and waits for the first reply head. When it is
 * `100 Continue`, sends the body and also waits for the final reply. Returns both status lines and
 * the final body.
 */
async function upload(port: number, path: string, cookie?: string): Promise<{ interim?: string; final: string; body: string }> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.setEncoding('latin1');
  const next = async (matches: () => boolean) => {
    while (!matches()) {
      const [chunk] = await Promise.race([once(socket, 'data'), once(socket, 'close').then(() => [''])]);
      if (chunk === '') break;
      received += chunk;
    }
  };
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: gateway.test\r\nAccept: application/json\r\n${cookie ? `Cookie: ${cookie}\r\n` : ''}` +
      `Content-Type: text/plain\r\nContent-Length: ${BODY.length}\r\nExpect: 100-continue\r\n\r\n`,
  );
  await next(() => received.includes('\r\n\r\n'));
  let interim: string | undefined;
  if (received.startsWith('HTTP/1.1 100')) {
    interim = received.slice(0, received.indexOf('\r\n'));
    received = received.slice(received.indexOf('\r\n\r\n') + 4);
    socket.write(BODY);
  }
  await next(() => {
    const blank = received.indexOf('\r\n\r\n');
    const length = /content-length: (\d+)/i.exec(received)?.[1];
    return blank !== -1 && length !== undefined && received.length >= blank + 4 + Number(length);
  });
  socket.destroy();
  return { interim, final: received.slice(0, received.indexOf('\r\n')), body: received.slice(received.indexOf('\r\n\r\n') + 4) };
}

describe('Expect: 100-continue', () => {
  const env = useEchoDataPlane((origin) => ({
    services: [
      service({ path: '/private', targetUrl: origin, requireAuth: true }),
      service({ path: '/off', targetUrl: origin, enabled: false }),
    ],
  }));

  it('a refused upload gets its final status with no 100 Continue, so its body is never sent', async () => {
    for (const [path, status] of [['/private/upload', '401'], ['/nowhere', '404'], ['/off/upload', '503']] as const) {
      const reply = await upload(env.gateway.port, path);
      assert.equal(reply.interim, undefined, path);
      assert.match(reply.final, new RegExp(`^HTTP/1.1 ${status} `), path);
    }
    assert.equal(env.upstream.requests.length, 0);
  });

  it('an upload that will be forwarded gets 100 Continue, then the target receives the whole body', async () => {
    const reply = await upload(env.gateway.port, '/private/upload', await env.gateway.signIn());
    assert.equal(reply.interim, 'HTTP/1.1 100 Continue');
    assert.match(reply.final, /^HTTP\/1.1 200 /);
    const received = JSON.parse(reply.body) as Echo;
    assert.equal(received.bodyBytes, BODY.length);
    assert.equal(received.headers.find(([name]) => name.toLowerCase() === 'expect'), undefined, 'Expect is not forwarded');
  });
});
