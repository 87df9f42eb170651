import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Agent } from 'undici';
import { startUpstream, type Upstream } from '../support/upstream.js';

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

/** The child's resident set size now and at its highest since the last reset, in bytes. */
interface Memory {
  rss: number;
  peak: number;
}

/** Asks the child for a message and returns its reply. */
async function ask<T>(child: ChildProcess, message: string): Promise<T> {
  const reply = once(child, 'message');
  child.send(message);
  return (await reply)[0] as T;
}

describe('streaming: 100 MB each way without buffering', () => {
  let upstream: Upstream;
  let child: ChildProcess;
  let origin: string;
  const agent = new Agent();

  before(async () => {
    upstream = await startUpstream(bulk);
    child = fork(fileURLToPath(new URL('../support/streaming-child.js', import.meta.url)), {
      env: { ...process.env, GATEHOUSE_STREAMING_CHILD: '1', UPSTREAM_ORIGIN: upstream.origin },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const [{ port }] = (await once(child, 'message')) as [{ port: number }];
    origin = `http://127.0.0.1:${port}`;
  });
  after(async () => {
    await agent.close();
    if (child.connected) {
      const exited = once(child, 'exit');
      child.send('close');
      await exited;
    }
    await upstream.close();
  });

  async function upload(bytes: number): Promise<number> {
    const response = await agent.request({
      origin,
      path: '/big/upload',
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(bytes) },
      body: generated(bytes),
    });
    assert.equal(response.statusCode, 200);
    return ((await response.body.json()) as { bytes: number }).bytes;
  }

  async function download(bytes: number): Promise<number> {
    const response = await agent.request({ origin, path: `/big/download?bytes=${bytes}`, method: 'GET' });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-length'], String(bytes));
    let received = 0;
    for await (const chunk of response.body) received += (chunk as Buffer).length;
    return received;
  }

  it('streams the upload and the download while the gateway RSS grows less than 50 MB', async (t) => {
    // Warm-up of 10 MB each way: pools, JIT, allocator and socket buffers reach their steady
    // state, and the peak RSS of a gateway moving data is the baseline.
    await ask(child, 'reset');
    assert.equal(await upload(10 * MiB), 10 * MiB);
    assert.equal(await download(10 * MiB), 10 * MiB);
    const { peak: baseline } = await ask<Memory>(child, 'reset');

    assert.equal(await upload(100 * MiB), 100 * MiB);
    assert.equal(await download(100 * MiB), 100 * MiB);

    const { peak } = await ask<Memory>(child, 'rss');
    const growth = peak - baseline;
    t.diagnostic(`gateway peak RSS: ${(baseline / MiB).toFixed(1)} MiB at 10 MB, ${(peak / MiB).toFixed(1)} MiB at 100 MB`);
    assert.ok(growth < MAX_GROWTH, `gateway peak RSS grew ${(growth / MiB).toFixed(1)} MiB`);
  });
});
