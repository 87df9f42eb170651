import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import { service } from '../support/samples.js';
import { rawUpstream, startUpstream, type RawUpstream, type Upstream } from '../support/upstream.js';
import { startDataPlane, type TestDataPlane } from '../support/data-plane.js';

/** A port nothing listens on: bound once, then released. */
async function closedPort(): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('upstream failures', () => {
  let upstream: Upstream;
  let garbage: RawUpstream;
  let gateway: TestDataPlane;
  /** Each request the misbehaving upstream receives, with its response. */
  const arrivals: { req: IncomingMessage; res: ServerResponse }[] = [];
  let arrived: (() => void) | undefined;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      arrivals.push({ req, res });
      arrived?.();
      if (req.url === '/destroy') req.socket.destroy();
      if (req.url === '/truncate') {
        res.writeHead(200, { 'content-length': 100 });
        res.write('only ten b', () => res.destroy());
      }
      // '/hang' never answers.
    });
    garbage = await rawUpstream('NOT HTTP AT ALL\r\n\r\n');
    gateway = await startDataPlane({
      env: { UPSTREAM_TIMEOUT: '500ms' },
      services: [
        service({ path: '/down', targetUrl: `http://127.0.0.1:${await closedPort()}` }),
        service({ path: '/nowhere', targetUrl: 'http://gatehouse-test.invalid' }),
        service({ path: '/up', targetUrl: upstream.origin }),
        service({ path: '/garbage', targetUrl: garbage.origin }),
      ],
    });
  });
  after(async () => {
    for (const { res } of arrivals) res.destroy();
    await gateway.close();
    await upstream.close();
    await garbage.close();
  });

  /** Resolves with the next request the upstream receives. */
  function nextArrival(): Promise<{ req: IncomingMessage; res: ServerResponse }> {
    const count = arrivals.length;
    return new Promise((resolve) => {
      arrived = () => {
        if (arrivals.length > count) resolve(arrivals[count]!);
      };
    });
  }

  it('answers 503 Service unavailable when the target refuses the connection', async () => {
    const response = await gateway.fetch('/down/x');
    assert.equal(response.status, 503);
    assert.deepEqual(response.json(), { error: 'Service unavailable' });
    const withBody = await gateway.fetch('/down/x', { method: 'POST', body: 'payload' });
    assert.equal(withBody.status, 503);
  });

  it('answers 503 when the target host does not resolve', async () => {
    const response = await gateway.fetch('/nowhere/x');
    assert.equal(response.status, 503);
    assert.deepEqual(response.json(), { error: 'Service unavailable' });
  });

  it('answers 504 Gateway timeout when no response headers arrive in time, and drops the upstream request', async () => {
    const arrival = nextArrival();
    const response = gateway.fetch('/up/hang');
    const { req } = await arrival;
    const started = Date.now();
    const result = await response;
    assert.equal(result.status, 504);
    assert.deepEqual(result.json(), { error: 'Gateway timeout' });
    assert.ok(Date.now() - started < 5_000);
    if (!req.socket.destroyed) await once(req.socket, 'close');
  });

  it('answers 502 Bad gateway when the target drops the connection', async () => {
    const response = await gateway.fetch('/up/destroy');
    assert.equal(response.status, 502);
    assert.deepEqual(response.json(), { error: 'Bad gateway' });
  });

  it('answers 502 when the target does not speak HTTP', async () => {
    const response = await gateway.fetch('/garbage/x');
    assert.equal(response.status, 502);
    assert.deepEqual(response.json(), { error: 'Bad gateway' });
  });

  it('cuts the client connection when the target fails after the response head', async () => {
    const agent = new Agent();
    try {
      const response = await agent.request({ origin: gateway.origin, path: '/up/truncate', method: 'GET' });
      assert.equal(response.statusCode, 200);
      await assert.rejects(response.body.text());
    } finally {
      await agent.close();
    }
  });
});

/**
 * With the default UPSTREAM_TIMEOUT (30 s) and body timeout (300 s), only the gateway noticing
 * the client leaving can end these upstream requests within the tests' 5 s.
 */
describe('client disconnects', () => {
  let upstream: Upstream;
  let gateway: TestDataPlane;
  const arrivals: { req: IncomingMessage; res: ServerResponse }[] = [];
  let arrived: (() => void) | undefined;

  before(async () => {
    upstream = await startUpstream((req, res) => {
      arrivals.push({ req, res });
      arrived?.();
      if (req.url === '/stream') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.write(Buffer.alloc(1024, 1)); // and never ends
      }
      // '/hang' never answers.
    });
    gateway = await startDataPlane({ services: [service({ path: '/up', targetUrl: upstream.origin })] });
  });
  after(async () => {
    for (const { res } of arrivals) res.destroy();
    await gateway.close();
    await upstream.close();
  });

  /** Resolves with the next request the upstream receives. */
  function nextArrival(): Promise<{ req: IncomingMessage; res: ServerResponse }> {
    const count = arrivals.length;
    return new Promise((resolve) => {
      arrived = () => {
        if (arrivals.length > count) resolve(arrivals[count]!);
      };
    });
  }

  it('aborts the upstream request when the client leaves while waiting for headers', { timeout: 5_000 }, async () => {
    const agent = new Agent();
    const controller = new AbortController();
    try {
      const arrival = nextArrival();
      const response = agent.request({ origin: gateway.origin, path: '/up/hang', method: 'GET', signal: controller.signal });
      const { req } = await arrival;
      const upstreamClosed = once(req.socket, 'close');
      controller.abort();
      await assert.rejects(response);
      await upstreamClosed; // the gateway dropped its upstream connection
    } finally {
      await agent.close();
    }
  });

  it('aborts the upstream response when the client leaves mid-download', { timeout: 5_000 }, async () => {
    const agent = new Agent();
    try {
      const arrival = nextArrival();
      const response = await agent.request({ origin: gateway.origin, path: '/up/stream', method: 'GET' });
      const { res } = await arrival;
      const upstreamClosed = once(res.socket!, 'close');
      for await (const chunk of response.body) {
        assert.ok(chunk.length > 0);
        break; // leaving the loop destroys the body, and with it the client's connection
      }
      await upstreamClosed;
      assert.equal(res.writableFinished, false, 'the upstream never got to finish');
    } finally {
      await agent.close();
    }
  });
});
