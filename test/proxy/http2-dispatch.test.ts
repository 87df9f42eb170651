/**
 * HTTP/2 to targets (proxy/forward/http2-dispatch.ts) against a real node:http2 server that takes
 * only 2 streams per connection: 20 requests at once all succeed, spread over more connections
 * (at most 8), none refused; a trailer section arrives after the body, as it must for gRPC.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Dispatcher } from 'undici';
import { Http2Dispatcher } from '../../proxy/forward/http2-dispatch.js';

interface Outcome {
  status: number;
  body: string;
  trailers: Record<string, unknown>;
}

/** Dispatches one GET of `path` and resolves with what the handler was told. */
function get(dispatcher: Http2Dispatcher, origin: string, path: string): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let body = '';
    const handler: Dispatcher.DispatchHandler = {
      onResponseStart: (_controller, statusCode) => void (status = statusCode),
      onResponseData: (_controller, chunk) => void (body += chunk.toString()),
      onResponseEnd: (_controller, trailers) => resolve({ status, body, trailers: { ...trailers } }),
      onResponseError: (_controller, error) => reject(error),
    };
    dispatcher.dispatch(origin, { method: 'GET', path, headers: ['host', 'target.test'] }, handler);
  });
}

describe('HTTP/2 to a target that takes 2 streams per connection', () => {
  let server: http2.Http2Server;
  let origin: string;
  let connections = 0;
  const dispatcher = new Http2Dispatcher(2_000, 10_000);

  before(async () => {
    server = http2.createServer({ settings: { maxConcurrentStreams: 2 } });
    server.on('session', () => connections++);
    server.on('stream', (stream, headers) => {
      setTimeout(() => {
        stream.respond({ ':status': 200 }, { waitForTrailers: true });
        stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', 'x-path': String(headers[':path']) }));
        stream.end(`answer to ${headers[':path']}`);
      }, 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `h2c://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await dispatcher.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('20 requests at once: each answered with its body and trailers, over more than one connection and at most 8', async () => {
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => get(dispatcher, origin, `/r${i}`)));
    outcomes.forEach((outcome, i) => {
      assert.deepEqual(outcome, { status: 200, body: `answer to /r${i}`, trailers: { 'grpc-status': '0', 'x-path': `/r${i}` } });
    });
    assert.ok(connections > 1 && connections <= 8, `${connections} connections`);
  });
});
