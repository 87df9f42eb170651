/**
 * A gRPC-Web call (HTTP/1.1, `Content-Type: application/grpc-web…`) the gateway refuses gets a
 * gRPC status its client can read (a trailers-only answer: 200 with `grpc-status` and
 * `grpc-message` in the head, in the call's own content type), never the JSON or HTML of other
 * clients: no session UNAUTHENTICATED (16), a disabled service UNAVAILABLE (14), no target
 * UNAVAILABLE, no such service UNIMPLEMENTED (12). A call the gateway lets through reaches the
 * target as it was sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from 'undici';
import { useAdminSession } from '../support/admin-session.js';
import { freePort } from '../support/free-port.js';

const GRPC_WEB = 'application/grpc-web+proto';
/** A gRPC-Web request body: one uncompressed message frame of 3 bytes. */
const FRAME = Buffer.from([0, 0, 0, 0, 3, 1, 2, 3]);

let protectedId: string;

const env = useAdminSession({ upstream: true }, async (env) => {
  const create = async (json: Record<string, unknown>) => {
    const created = await env.call('POST', '/api/services', { as: env.admin, json });
    assert.equal(created.status, 201, created.text);
    return String(created.json.id);
  };
  protectedId = await create({ name: 'Web gRPC', path: '/rpc', targetUrl: env.upstream.origin, requireAuth: true });
  await create({ name: 'Open gRPC', path: '/open-rpc', targetUrl: env.upstream.origin, requireAuth: false });
  await create({ name: 'Gone', path: '/gone-rpc', targetUrl: `http://127.0.0.1:${await freePort()}`, requireAuth: false });
  const off = await create({ name: 'Off', path: '/off-rpc', targetUrl: env.upstream.origin, requireAuth: false });
  assert.equal((await env.call('PATCH', `/api/services/${off}/toggle`, { as: env.admin, json: { enabled: false } })).status, 200);
});

async function call(path: string, headers: Record<string, string> = {}) {
  const answer = await request(`${env.gw.origin}${path}`, { method: 'POST', headers: { 'content-type': GRPC_WEB, 'x-grpc-web': '1', ...headers }, body: FRAME });
  return { status: answer.statusCode, headers: answer.headers, body: await answer.body.arrayBuffer() };
}

for (const [path, what, grpcStatus, message] of [
  ['/rpc/pkg.Service/Method', 'no session', '16', 'Not authenticated'],
  ['/off-rpc/pkg.Service/Method', 'a disabled service', '14', 'Service is disabled'],
  ['/gone-rpc/pkg.Service/Method', 'a target that refuses connections', '14', 'Service unavailable'],
  ['/nothing-here/pkg.Service/Method', 'no service at the path', '12', 'Service not found'],
] as const) {
  test(`a gRPC-Web call to ${what}: 200 with grpc-status ${grpcStatus} in the head, the call's content type, no body`, async () => {
    const answer = await call(path);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers['content-type'], GRPC_WEB);
    assert.equal(answer.headers['grpc-status'], grpcStatus);
    assert.equal(answer.headers['grpc-message'], message);
    assert.match(String(answer.headers['x-request-id']), /^[0-9a-f]{16}$/);
    assert.equal(answer.body.byteLength, 0);
  });
}

test('a gRPC-Web call the gateway lets through reaches the target with its content type and body', async () => {
  const before = env.upstream.requests.length;
  const answer = await call('/open-rpc/pkg.Service/Method');
  assert.equal(answer.status, 200);
  const received = env.upstream.requests.slice(before);
  assert.equal(received.length, 1);
  const contentType = received[0]!.headers.find(([name]) => name.toLowerCase() === 'content-type')?.[1];
  assert.equal(contentType, GRPC_WEB);
  assert.equal(received[0]!.url, '/pkg.Service/Method');
  assert.equal(received[0]!.bodyBytes, FRAME.length);
});

test("the access log records a refused call by what the refusal stands for (401), not the 200 on the wire", async () => {
  const answer = await call('/rpc/pkg.Service/Logged');
  assert.equal(answer.headers['grpc-status'], '16');
  let record: { path: string; status_code: number } | undefined;
  while (record === undefined) {
    const logs = await env.call('GET', `/api/services/${protectedId}/logs?path=${encodeURIComponent('/rpc/pkg.Service/Logged')}`, { as: env.admin });
    record = logs.json.logs[0];
  }
  assert.equal(record.status_code, 401);
});
