/**
 * A 1 GiB gRPC server stream through the gateway with flat memory (README "gRPC"): a grpc-js client
 * over HTTP/2 with prior knowledge (H2C=true) to a gateway alone in its process
 * (test/support/streaming-child.ts), an `h2c://` grpc-js target streaming 16,384 messages of
 * 64 KiB. Every byte arrives, in order of messages, and the gateway's peak RSS grows by less than
 * 50 MiB over a 64 MiB warm-up: HTTP/2 flow control holds the target back while the client reads,
 * end to end, rather than the gateway buffering.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startStreamingGateway, type StreamingGateway } from '../support/streaming-gateway.js';
import { echoClient, metadataOf, startGrpcTarget, type Chunk, type EchoClient, type GrpcTarget } from '../support/grpc-service.js';

const MiB = 1024 * 1024;
const MESSAGE_BYTES = 64 * 1024;
/** Growth of the gateway's peak RSS allowed while the 1 GiB passes, over the warm-up's. */
const MAX_GROWTH = 50 * MiB;

describe('a 1 GiB gRPC server stream through the gateway', () => {
  let target: GrpcTarget;
  let gateway: StreamingGateway;
  let client: EchoClient;

  before(async () => {
    target = await startGrpcTarget();
    gateway = await startStreamingGateway(target.url, { H2C: 'true' });
    client = echoClient(`127.0.0.1:${gateway.port}`, { prefix: '/big' });
  });
  after(async () => {
    client?.close();
    await gateway?.close();
    await target?.close();
  });

  /** Streams `count` messages of 64 KiB through the gateway; resolves with the bytes received. */
  async function stream(count: number): Promise<number> {
    let bytes = 0;
    for await (const chunk of client.Count({ count, size: MESSAGE_BYTES }, metadataOf())) bytes += (chunk as Chunk).data.length;
    return bytes;
  }

  it('every byte arrives while the gateway RSS grows less than 50 MiB', async (t) => {
    await gateway.resetPeak();
    assert.equal(await stream(1_024), 64 * MiB);
    const { peak: baseline } = await gateway.resetPeak();

    assert.equal(await stream(16_384), 1_024 * MiB);

    const { peak } = await gateway.memory();
    t.diagnostic(`gateway peak RSS: ${(baseline / MiB).toFixed(1)} MiB after 64 MiB, ${(peak / MiB).toFixed(1)} MiB over 1 GiB`);
    assert.ok(peak - baseline < MAX_GROWTH, `gateway peak RSS grew ${((peak - baseline) / MiB).toFixed(1)} MiB`);
  });
});
