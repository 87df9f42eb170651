/**
 * A 1 GiB gRPC server stream through the gateway with flat memory (README "gRPC"): a grpc-js client
 * over HTTP/2 with prior knowledge (H2C=true) to a gateway alone in its process
 * (test/support/streaming-child.ts), an `h2c://` grpc-js target streaming 16,384 messages of
 * 64 KiB. Every byte arrives, in order of messages, and the gateway's peak RSS grows by less than
 * 50 MiB over a 64 MiB warm-up: HTTP/2 flow control holds the target back while the client reads,
 * end to end, rather than the gateway buffering.
 */
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { echoClient, metadataOf, startGrpcTarget, type Chunk, type EchoClient, type GrpcTarget } from '../support/grpc-service.js';

const MiB = 1024 * 1024;
const MESSAGE_BYTES = 64 * 1024;
/** Growth of the gateway's peak RSS allowed while the 1 GiB passes, over the warm-up's. */
const MAX_GROWTH = 50 * MiB;

interface Memory {
  rss: number;
  peak: number;
}

async function ask<T>(child: ChildProcess, message: string): Promise<T> {
  const reply = once(child, 'message');
  child.send(message);
  return (await reply)[0] as T;
}

describe('a 1 GiB gRPC server stream through the gateway', () => {
  let target: GrpcTarget;
  let child: ChildProcess;
  let client: EchoClient;

  before(async () => {
    target = await startGrpcTarget();
    child = fork(fileURLToPath(new URL('../support/streaming-child.js', import.meta.url)), {
      env: { ...process.env, GATEHOUSE_STREAMING_CHILD: '1', UPSTREAM_ORIGIN: target.url, GATEHOUSE_CHILD_ENV: JSON.stringify({ H2C: 'true' }) },
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const [{ port }] = (await once(child, 'message')) as [{ port: number }];
    client = echoClient(`127.0.0.1:${port}`, { prefix: '/big' });
  });
  after(async () => {
    client?.close();
    if (child?.connected) {
      const exited = once(child, 'exit');
      child.send('close');
      await exited;
    }
    await target?.close();
  });

  /** Streams `count` messages of 64 KiB through the gateway; resolves with the bytes received. */
  async function stream(count: number): Promise<number> {
    let bytes = 0;
    for await (const chunk of client.Count({ count, size: MESSAGE_BYTES }, metadataOf())) bytes += (chunk as Chunk).data.length;
    return bytes;
  }

  it('every byte arrives while the gateway RSS grows less than 50 MiB', async (t) => {
    await ask(child, 'reset');
    assert.equal(await stream(1_024), 64 * MiB);
    const { peak: baseline } = await ask<Memory>(child, 'reset');

    assert.equal(await stream(16_384), 1_024 * MiB);

    const { peak } = await ask<Memory>(child, 'rss');
    t.diagnostic(`gateway peak RSS: ${(baseline / MiB).toFixed(1)} MiB after 64 MiB, ${(peak / MiB).toFixed(1)} MiB over 1 GiB`);
    assert.ok(peak - baseline < MAX_GROWTH, `gateway peak RSS grew ${((peak - baseline) / MiB).toFixed(1)} MiB`);
  });
});
