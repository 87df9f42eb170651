import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { Agent } from 'undici';
import type { OutgoingHttpHeaders } from 'node:http2';
import { openSession } from '../support/http2-client.js';
import { startUpstream, type Upstream } from '../support/upstream.js';
import { startStreamingGateway, type StreamingGateway } from '../support/streaming-gateway.js';

const MiB = 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x61);
/** Growth of the gateway process's RSS allowed while 100 MB pass through each way. */
const MAX_GROWTH = 50 * MiB;

/** `bytes` of data as a stream of one reused 64 KiB chunk: nothing near `bytes` is ever allocated. */
function generated(bytes: number): Readable {
  let left = bytes;
  return new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= chunk.length;
      this.push(chunk);
    },
  });
}

/** `/download?bytes=n` streams n bytes; `/upload` counts the body and answers `{ bytes }`. */
function bulk(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://upstream');
  if (url.pathname === '/download') {
    const bytes = Number(url.searchParams.get('bytes'));
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
    void pipeline(generated(bytes), res).catch(() => {});
    return;
  }
  let bytes = 0;
  req.on('data', (chunk: Buffer) => (bytes += chunk.length));
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes })));
}

/** How a client moves a body through the gateway: over HTTP/1.1 (undici) or HTTP/2 with prior knowledge (node:http2, H2C=true). */
interface BulkClient {
  upload(bytes: number): Promise<number>;
  download(bytes: number): Promise<number>;
  close(): Promise<void>;
}

function http1Client(origin: string): BulkClient {
  const agent = new Agent();
  return {
    async upload(bytes) {
      const response = await agent.request({
        origin,
        path: '/big/upload',
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes) },
        body: generated(bytes),
      });
      assert.equal(response.statusCode, 200);
      return ((await response.body.json()) as { bytes: number }).bytes;
    },
    async download(bytes) {
      const response = await agent.request({ origin, path: `/big/download?bytes=${bytes}`, method: 'GET' });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-length'], String(bytes));
      let received = 0;
      for await (const chunk of response.body) received += (chunk as Buffer).length;
      return received;
    },
    close: () => agent.close(),
  };
}

async function http2Client(origin: string): Promise<BulkClient> {
  const session = await openSession(origin);
  /** One stream's response head and the bytes of its body, counted as they come. */
  const exchange = (headers: OutgoingHttpHeaders, body?: Readable) =>
    new Promise<{ status: number; bytes: number; text: string }>((resolve, reject) => {
      const stream = session.request(headers, { endStream: body === undefined });
      let status = 0;
      let bytes = 0;
      let text = '';
      stream.on('response', (head) => (status = Number(head[':status'])));
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (text.length < 1_000) text += chunk.toString();
      });
      stream.on('error', reject);
      stream.on('end', () => resolve({ status, bytes, text }));
      body?.pipe(stream);
    });
  return {
    async upload(bytes) {
      const answer = await exchange({ ':method': 'POST', ':path': '/big/upload', 'content-type': 'application/octet-stream' }, generated(bytes));
      assert.equal(answer.status, 200);
      return (JSON.parse(answer.text) as { bytes: number }).bytes;
    },
    async download(bytes) {
      const answer = await exchange({ ':method': 'GET', ':path': `/big/download?bytes=${bytes}` });
      assert.equal(answer.status, 200);
      return answer.bytes;
    },
    close: async () => void session.close(),
  };
}

for (const protocol of ['http/1.1', 'h2'] as const) {
  describe(`streaming over ${protocol}: 100 MB each way without buffering`, () => {
    let upstream: Upstream;
    let gateway: StreamingGateway;
    let client: BulkClient;

    before(async () => {
      upstream = await startUpstream(bulk);
      gateway = await startStreamingGateway(upstream.origin, protocol === 'h2' ? { H2C: 'true' } : {});
      client = protocol === 'h2' ? await http2Client(gateway.origin) : http1Client(gateway.origin);
    });
    after(async () => {
      await client?.close();
      await gateway?.close();
      await upstream.close();
    });

    it('streams the upload and the download while the gateway RSS grows less than 50 MB', async (t) => {
      // Warm-up of 10 MB each way: pools, JIT, allocator and socket buffers reach their steady
      // state, and the peak RSS of a gateway moving data is the baseline.
      await gateway.resetPeak();
      assert.equal(await client.upload(10 * MiB), 10 * MiB);
      assert.equal(await client.download(10 * MiB), 10 * MiB);
      const { peak: baseline } = await gateway.resetPeak();

      assert.equal(await client.upload(100 * MiB), 100 * MiB);
      assert.equal(await client.download(100 * MiB), 100 * MiB);

      const { peak } = await gateway.memory();
      const growth = peak - baseline;
      t.diagnostic(`gateway peak RSS: ${(baseline / MiB).toFixed(1)} MiB at 10 MB, ${(peak / MiB).toFixed(1)} MiB at 100 MB`);
      assert.ok(growth < MAX_GROWTH, `gateway peak RSS grew ${(growth / MiB).toFixed(1)} MiB`);
    });
  });
}
