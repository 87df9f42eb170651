/**
 * A gRPC target behind TLS (README "gRPC"): a service whose target is `https://localhost:<port>`
 * (a grpc-js server with a certificate of a CA the gateway process trusts) gets gRPC calls over
 * HTTP/2 by ALPN (gRPC needs it; the gateway process trusts the CA through NODE_EXTRA_CA_CERTS).
 * A grpc-js client reaches the gateway with H2C; the unary reply and a server stream come back,
 * and a failing method's status.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { echoClient, grpc, metadataOf, startGrpcTarget, unary, type Chunk, type EchoClient, type EchoReply, type GrpcTarget } from '../support/grpc-service.js';
import { startStreamingGateway, type StreamingGateway } from '../support/streaming-gateway.js';
import { makeTestCa } from '../support/test-certificates.js';

describe('a gRPC target over TLS', () => {
  let dir: string;
  let target: GrpcTarget;
  let gateway: StreamingGateway;
  let client: EchoClient;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-grpc-https-'));
    const ca = makeTestCa(dir);
    target = await startGrpcTarget(ca.issue('localhost', ['localhost']));
    gateway = await startStreamingGateway(target.url, { H2C: 'true' }, { NODE_EXTRA_CA_CERTS: ca.caFile });
    client = echoClient(`127.0.0.1:${gateway.port}`, { prefix: '/big' });
  });
  after(async () => {
    client?.close();
    await gateway?.close();
    await target?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('unary and server-streaming calls reach it over HTTP/2 by ALPN; a failing status comes back', async () => {
    assert.match(target.url, /^https:\/\/localhost:/);
    const reply = await unary<EchoReply>(client, 'Unary', { text: 'over tls to the target' });
    assert.equal(reply.text, 'over tls to the target');
    let received = 0;
    for await (const chunk of client.Count({ count: 200, size: 1_000 }, metadataOf())) received += (chunk as Chunk).data.length;
    assert.equal(received, 200_000);
    const error = await unary(client, 'Fail', { code: grpc.status.RESOURCE_EXHAUSTED, message: 'full' }).then(
      () => assert.fail('the call succeeded'),
      (failure: grpc.ServiceError) => failure,
    );
    assert.equal(error.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.equal(target.calls.get('Unary'), 1);
  });
});
