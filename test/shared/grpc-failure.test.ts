/**
 * The gateway's refusals of a gRPC call (shared/http/grpc-failure.ts) as a real gRPC client reads
 * them: a node:http2 server answering through `sendGrpcFailure`, called by `@grpc/grpc-js`. Each
 * refusal arrives as the status the issue names (no session UNAUTHENTICATED, a policy
 * PERMISSION_DENIED, no target UNAVAILABLE, a timeout DEADLINE_EXCEEDED), its message intact.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import type { ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { GatewayError, type ErrorCode } from '../../shared/errors.js';
import { encodeGrpcMessage, grpcStatusOf, isGrpcRequest, sendGrpcFailure } from '../../shared/http/grpc-failure.js';
import { setRequestId } from '../../shared/http/request-id.js';
import { echoClient, grpc, unary, type EchoClient } from '../support/grpc-service.js';

describe('a gRPC call the gateway refuses', () => {
  let server: http2.Http2Server;
  let client: EchoClient;
  /** What the next call is refused with, and its custom message if any. */
  let refusal: { code: ErrorCode; message?: string; headers?: Record<string, string> } = { code: 'NOT_AUTHENTICATED' };
  let seenContentType: string | undefined;

  before(async () => {
    server = http2.createServer((req, res) => {
      seenContentType = req.headers['content-type'];
      req.resume();
      setRequestId(res as unknown as ServerResponse, '0123456789abcdef');
      sendGrpcFailure(res as unknown as ServerResponse, new GatewayError(refusal.code, refusal), String(req.headers['content-type']));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = echoClient(`127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    client?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  const cases: Array<[ErrorCode, grpc.status]> = [
    ['NOT_AUTHENTICATED', grpc.status.UNAUTHENTICATED],
    ['ACCESS_DENIED', grpc.status.PERMISSION_DENIED],
    ['SERVICE_UNAVAILABLE', grpc.status.UNAVAILABLE],
    ['BAD_GATEWAY', grpc.status.UNAVAILABLE],
    ['GATEWAY_TIMEOUT', grpc.status.DEADLINE_EXCEEDED],
    ['RATE_LIMITED', grpc.status.RESOURCE_EXHAUSTED],
    ['SERVICE_NOT_FOUND', grpc.status.UNIMPLEMENTED],
    ['SERVICE_DISABLED', grpc.status.UNAVAILABLE],
    ['INTERNAL', grpc.status.INTERNAL],
  ];
  for (const [code, expected] of cases) {
    it(`${code} reaches the client as ${grpc.status[expected]} with the gateway's message`, async () => {
      refusal = { code };
      const error = await unary(client, 'Unary', { text: 'x' }).then(
        () => assert.fail('the call succeeded'),
        (failure: grpc.ServiceError) => failure,
      );
      assert.equal(error.code, expected);
      assert.equal(error.details, new GatewayError(code).message);
      assert.deepEqual(error.metadata.get('x-request-id'), ['0123456789abcdef'], 'the request id rides along');
      assert.match(String(seenContentType), /^application\/grpc/);
    });
  }

  it('a message outside printable ASCII arrives whole (percent-encoded on the wire)', async () => {
    refusal = { code: 'ACCESS_DENIED', message: 'Zugriff verweigert: 100% nötig\n' };
    const error = await unary(client, 'Unary', { text: 'x' }).then(
      () => assert.fail('the call succeeded'),
      (failure: grpc.ServiceError) => failure,
    );
    assert.equal(error.details, 'Zugriff verweigert: 100% nötig\n');
  });
});

describe('gRPC refusal details', () => {
  it('knows gRPC and gRPC-Web requests by their content type, and nothing else', () => {
    for (const type of ['application/grpc', 'application/grpc+proto', 'application/GRPC+json', 'application/grpc-web', 'application/grpc-web+proto', 'application/grpc-web-text', 'application/grpc; charset=utf-8']) {
      assert.equal(isGrpcRequest(type), true, type);
    }
    for (const type of [undefined, '', 'application/json', 'application/grpcx', 'text/grpc', 'application/grpc-webx', 'multipart/form-data; boundary=application/grpc']) {
      assert.equal(isGrpcRequest(type), false, String(type));
    }
  });

  it('grpc-message is percent-encoded UTF-8 (printable ASCII but % kept)', () => {
    assert.equal(encodeGrpcMessage('Not authenticated'), 'Not authenticated');
    assert.equal(encodeGrpcMessage('50% ü\n'), '50%25 %C3%BC%0A');
  });

  it("statuses without a finer mapping follow gRPC's HTTP mapping", () => {
    assert.equal(grpcStatusOf('BAD_REQUEST', 400), grpc.status.INVALID_ARGUMENT);
    assert.equal(grpcStatusOf('INVALID_CSRF', 403), grpc.status.PERMISSION_DENIED);
    assert.equal(grpcStatusOf('IDENTITY_PROVIDER_UNAVAILABLE', 503), grpc.status.UNAVAILABLE);
  });
});
