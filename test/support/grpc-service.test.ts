/**
 * The gRPC test target (grpc-service.ts) called directly, over cleartext HTTP/2 and over TLS: what
 * the gateway's gRPC tests compare against — every call kind, a failing method's status and
 * trailer, a deadline.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { echoClient, grpc, metadataOf, startGrpcTarget, unary, type Chunk, type EchoClient, type EchoReply, type GrpcTarget, type SumReply } from './grpc-service.js';
import { makeTestCa } from './test-certificates.js';

for (const secure of [false, true]) {
  describe(`the gRPC test target, ${secure ? 'TLS' : 'h2c'}`, () => {
    let target: GrpcTarget;
    let client: EchoClient;
    const dir = mkdtempSync(join(tmpdir(), 'grpc-target-'));

    before(async () => {
      const ca = makeTestCa(dir);
      target = await startGrpcTarget(secure ? ca.issue('localhost', ['localhost']) : undefined);
      client = echoClient(secure ? `localhost:${target.port}` : `127.0.0.1:${target.port}`, secure ? { ca: ca.caFile } : {});
    });
    after(async () => {
      client?.close();
      await target?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('unary: the reply echoes the text and says which metadata arrived', async () => {
      const reply = await unary<EchoReply>(client, 'Unary', { text: 'hi' }, { metadata: { authorization: 'Bearer t', 'x-echo': 'e' } });
      assert.deepEqual(reply, { text: 'hi', seen: ['authorization'], echo: 'e' });
      assert.equal(target.calls.get('Unary'), 1);
    });

    it("a failing method: its code, message and trailer reach the client", async () => {
      const error = await unary(client, 'Fail', { code: grpc.status.NOT_FOUND, message: 'no such thing' }).then(
        () => assert.fail('resolved'),
        (failure: grpc.ServiceError) => failure,
      );
      assert.equal(error.code, grpc.status.NOT_FOUND);
      assert.equal(error.details, 'no such thing');
      assert.deepEqual(error.metadata.get('x-detail'), ['why']);
    });

    it('a deadline shorter than the method: DEADLINE_EXCEEDED', async () => {
      const error = await unary(client, 'Slow', { delayMs: 2_000 }, { deadlineMs: 100 }).then(
        () => assert.fail('resolved'),
        (failure: grpc.ServiceError) => failure,
      );
      assert.equal(error.code, grpc.status.DEADLINE_EXCEEDED);
    });

    it('server streaming, client streaming and bidirectional calls', async () => {
      const chunks: Chunk[] = [];
      const count = client.Count({ count: 50, size: 1_000 }, metadataOf());
      for await (const chunk of count) chunks.push(chunk as Chunk);
      assert.equal(chunks.length, 50);
      assert.equal(chunks[0]!.data.length, 1_000);

      const sum = await new Promise<SumReply>((resolve, reject) => {
        const call = client.Sum(metadataOf(), (error, reply) => (error ? reject(error) : resolve(reply!)));
        for (let i = 0; i < 10; i++) call.write({ data: 'abc' });
        call.end();
      });
      assert.deepEqual(sum, { messages: 10, bytes: 30 });

      const chat = client.Chat(metadataOf({ authorization: 'Bearer t' }));
      const replies: EchoReply[] = [];
      chat.on('data', (reply: EchoReply) => {
        replies.push(reply);
        if (replies.length < 3) chat.write({ text: `m${replies.length}` });
        else chat.end();
      });
      chat.write({ text: 'm0' });
      await new Promise((resolve, reject) => chat.on('end', resolve).on('error', reject));
      assert.deepEqual(replies.map((reply) => [reply.text, reply.seen]), [['m0', ['authorization']], ['m1', ['authorization']], ['m2', ['authorization']]]);
    });
  });
}
