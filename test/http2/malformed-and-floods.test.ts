/**
 * What a hostile or broken HTTP/2 client can do to the gateway (design.md §4.17), with frames
 * written by hand (raw-http2.ts) on the H2C listener, whose sessions have the same settings and
 * bounds as the TLS listener's (http2-settings.ts). Malformed requests get a stream error and the
 * connection goes on; a header list over the limits is refused; rapid reset (CVE-2023-44487), a
 * CONTINUATION flood and a SETTINGS flood end their connection (the gateway closes it: each test
 * waits for the close). After each, the process serves another client as before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createService } from '../support/api-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { signIn } from '../support/sessions.js';
import { http2Request, openSession } from '../support/http2-client.js';
import { ErrorCode, Flag, frame, FrameType, getRequest, headerBlock, RawHttp2Connection } from '../support/raw-http2.js';
import { continuationFlood, rapidReset, settingsFlood } from '../support/http2-attacks.js';
import { startEchoUpstream, type EchoUpstream } from '../support/upstream.js';

let echo: EchoUpstream;
let gw: TestGateway;
let port: number;
let authority: string;

before(async () => {
  echo = await startEchoUpstream();
  gw = await startTestGateway({ H2C: 'true' });
  await createService(gw.adminUrl, await signIn(gw), { name: 'Echo', path: '/echo', targetUrl: echo.origin, requireAuth: false });
  authority = new URL(gw.origin).host;
  port = Number(new URL(gw.origin).port);
});

after(async () => {
  await gw?.close();
  await echo?.close();
});

/** Another client, on a connection of its own, is served. */
async function othersAreServed(): Promise<void> {
  const session = await openSession(gw.origin);
  try {
    assert.equal((await http2Request(session, { ':path': '/echo/other' })).status, 200);
  } finally {
    session.close();
  }
}

/** Whether a HEADERS frame (a response) came on `streamId`. */
function answered(connection: RawHttp2Connection, streamId: number): boolean {
  return connection.frames.some((f) => f.type === FrameType.HEADERS && f.streamId === streamId);
}

describe('malformed requests: a stream error, the connection goes on', () => {
  test('HEADERS without :method and :path', async () => {
    const connection = await RawHttp2Connection.open(port);
    connection.headers(1, [[':scheme', 'http'], [':authority', authority]]);
    assert.equal(await connection.resetCode(1), ErrorCode.PROTOCOL_ERROR);
    connection.headers(3, getRequest(authority, '/echo/after'));
    await connection.waitFor((f) => f.type === FrameType.HEADERS && f.streamId === 3);
    assert.ok(answered(connection, 3), 'the next stream on the same connection is answered');
    connection.close();
    await othersAreServed();
  });

  for (const [name, value] of [['connection', 'keep-alive'], ['transfer-encoding', 'chunked'], ['upgrade', 'websocket'], ['keep-alive', '5'], ['proxy-connection', 'keep-alive'], ['te', 'gzip']]) {
    test(`a connection-specific field (${name}: ${value}, RFC 9113 §8.2.2)`, async () => {
      const connection = await RawHttp2Connection.open(port);
      connection.headers(1, [...getRequest(authority, '/echo/x'), [name!, value!]]);
      assert.equal(await connection.resetCode(1), ErrorCode.PROTOCOL_ERROR);
      assert.ok(!answered(connection, 1));
      connection.close();
    });
  }
});

describe('header lists over the limits', () => {
  test('101 fields: 431, as over HTTP/1.1', async () => {
    const session = await openSession(gw.origin);
    try {
      const fields = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`x-field-${i}`, 'v']));
      const answer = await http2Request(session, { ':path': '/echo/x', ...fields });
      assert.equal(answer.status, 431);
    } finally {
      session.close();
    }
  });

  test('a header list larger than SETTINGS_MAX_HEADER_LIST_SIZE: the stream is reset (ENHANCE_YOUR_CALM) unanswered', async () => {
    const connection = await RawHttp2Connection.open(port);
    const block = headerBlock([...getRequest(authority, '/echo/x'), ['x-big', 'a'.repeat(15_000)], ['x-big-2', 'b'.repeat(15_000)]]);
    // split over CONTINUATION frames: a HEADERS frame may not exceed the 16 KiB max frame size
    connection.write(frame(FrameType.HEADERS, Flag.END_STREAM, 1, block.subarray(0, 16_000)));
    connection.write(frame(FrameType.CONTINUATION, Flag.END_HEADERS, 1, block.subarray(16_000)));
    assert.equal(await connection.resetCode(1), ErrorCode.ENHANCE_YOUR_CALM);
    assert.ok(!answered(connection, 1), 'no response');
    connection.close();
    await othersAreServed();
  });
});

describe('floods end their connection; other clients are served', () => {
  test('rapid reset: streams opened and reset at once, by the thousand (CVE-2023-44487)', async () => {
    const before = echo.requests.length;
    await rapidReset(port, authority, '/echo/reset');
    assert.ok(echo.requests.length - before < 1000, `at most a few of the 10,000 streams reached the target (${echo.requests.length - before})`);
    await othersAreServed();
  });

  test('CONTINUATION frames without END_HEADERS, without end (the CVE-2024-27316 class)', async () => {
    const connection = await continuationFlood(port, authority, '/echo/x');
    assert.ok(!answered(connection, 1));
    await othersAreServed();
  });

  test('a SETTINGS flood', async () => {
    await settingsFlood(port);
    await othersAreServed();
  });
});
