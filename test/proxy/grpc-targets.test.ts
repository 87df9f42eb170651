/**
 * Targets spoken to over HTTP/2 (design.md §4.13): a service whose target is `h2c://host:port`
 * reaches a real gRPC server (@grpc/grpc-js, test/support/grpc-service.ts) in cleartext HTTP/2.
 * The calls here come to the
 * gateway as gRPC framed over HTTP/1.1 (what a gRPC-Web proxy in front would send, and the one
 * client shape that needs no HTTP/2 listener): the target's message and its trailers
 * (`grpc-status`, `grpc-message`, its own) reach the client.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { freePort } from '../support/free-port.js';
import { grpc, grpcFrame as frame, grpcMessages as messages, startGrpcTarget, type GrpcTarget } from '../support/grpc-service.js';

let target: GrpcTarget;

const env = useAdminSession({ upstream: true }, async (env) => {
  target = await startGrpcTarget();
  const created = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'gRPC', path: '/h2c', targetUrl: target.url, requireAuth: false } });
  assert.equal(created.status, 201, created.text);
  assert.equal(created.json.targetUrl, target.url);
  const down = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'Down', path: '/down', targetUrl: `h2c://127.0.0.1:${await freePort()}`, requireAuth: false } });
  assert.equal(down.status, 201, down.text);
});

after(() => target?.close());

/** A gRPC call over HTTP/1.1 to the gateway: the response's status, messages and trailers. */
async function call(path: string, body: Buffer) {
  const answer = await request(`${env.gw.origin}${path}`, { method: 'POST', headers: { 'content-type': 'application/grpc', te: 'trailers' }, body });
  const received = Buffer.from(await answer.body.arrayBuffer());
  return { status: answer.statusCode, headers: answer.headers, messages: messages(received), trailers: answer.trailers };
}

describe('gRPC targets over HTTP/2', () => {
  it("a unary call's reply and grpc-status 0 reach the client", async () => {
    const before = target.calls.get('Unary') ?? 0;
    const answer = await call('/h2c/gatehouse.test.Echo/Unary', frame({ text: 'through the gateway' }));
    assert.equal(answer.status, 200);
    assert.match(String(answer.headers['content-type']), /^application\/grpc/);
    assert.deepEqual(answer.messages, [{ text: 'through the gateway', seen: ['x-request-id'] }]);
    assert.equal(answer.trailers['grpc-status'], '0');
    assert.equal(target.calls.get('Unary'), before + 1);
  });

  it("a failing method: the target's trailers-only answer (grpc-status, grpc-message, its own field) reaches the client as it was", async () => {
    const answer = await call('/h2c/gatehouse.test.Echo/Fail', frame({ code: grpc.status.FAILED_PRECONDITION, message: 'not now' }));
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['grpc-status'], String(grpc.status.FAILED_PRECONDITION));
    assert.equal(decodeURIComponent(String(answer.headers['grpc-message'])), 'not now');
    assert.equal(answer.headers['x-detail'], 'why');
    assert.deepEqual(answer.messages, []);
  });

  it('a server stream of 2,000 messages arrives whole, in order', async () => {
    const answer = await call('/h2c/gatehouse.test.Echo/Count', frame({ count: 2_000, size: 512 }));
    assert.equal(answer.messages.length, 2_000);
    assert.equal((answer.messages[1_999] as { data: string }).data.length, 512);
    assert.equal(answer.trailers['grpc-status'], '0');
  });

  it('a client stream: every message of the request body reaches the target', async () => {
    const body = Buffer.concat(Array.from({ length: 300 }, () => frame({ data: 'abcd' })));
    const answer = await call('/h2c/gatehouse.test.Echo/Sum', body);
    assert.deepEqual(answer.messages, [{ messages: 300, bytes: 1_200 }]);
    assert.equal(answer.trailers['grpc-status'], '0');
  });
});

describe('an h2c target that is not there', () => {
  it('the call is answered UNAVAILABLE (grpc-status 14), in time, and the process goes on serving', async () => {
    const answer = await call('/down/gatehouse.test.Echo/Unary', frame({ text: 'x' }));
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['grpc-status'], '14');
    assert.equal((await call('/h2c/gatehouse.test.Echo/Unary', frame({ text: 'still here' }))).messages.length, 1);
  });
});

describe('h2c target urls in the registry', () => {
  it('an h2c: url with a user info part is refused like any other', async () => {
    const refused = await env.call('POST', '/api/services', { as: env.admin, json: { name: 'bad', path: '/bad-h2c', targetUrl: 'h2c://user@127.0.0.1:1' } });
    assert.equal(refused.status, 400);
    assert.equal(refused.json.fields.targetUrl, 'must not contain user info');
  });
});
