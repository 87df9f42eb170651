import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ServerHttp2Stream } from 'node:http2';
import type { ErrorCode, GatewayError } from '../errors.js';
import { withRequestId } from './request-id.js';

/**
 * gRPC status codes the gateway answers with (gRPC "Status codes and their use in gRPC",
 * doc/statuscodes.md).
 */
export const GrpcStatus = {
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** `application/grpc`, `application/grpc+proto`, `application/grpc-web`, `application/grpc-web-text+proto`, … (any case). */
const GRPC_CONTENT_TYPE = /^application\/grpc(?:-web(?:-text)?)?(?:[+;]|$)/i;

/**
 * Whether a request is a gRPC or gRPC-Web call, by its `Content-Type` (gRPC over HTTP/2,
 * PROTOCOL-HTTP2.md "Requests"; gRPC-Web, PROTOCOL-WEB.md): its failures must be gRPC statuses,
 * never an HTML page or a JSON body its client cannot read.
 */
export function isGrpcRequest(contentType: string | undefined): boolean {
  return contentType !== undefined && GRPC_CONTENT_TYPE.test(contentType);
}

/**
 * The gRPC status for a gateway failure: no session or a bad bearer token UNAUTHENTICATED, a policy
 * refusal PERMISSION_DENIED, a timeout DEADLINE_EXCEEDED, a limit RESOURCE_EXHAUSTED, no such
 * service UNIMPLEMENTED, a target or backend away UNAVAILABLE (gRPC's HTTP-to-gRPC mapping,
 * doc/http-grpc-status-mapping.md, made finer where the gateway knows more than the status).
 */
export function grpcStatusOf(code: ErrorCode, status: number): number {
  switch (code) {
    case 'GATEWAY_TIMEOUT':
    case 'REQUEST_TIMEOUT':
      return GrpcStatus.DEADLINE_EXCEEDED;
    case 'RATE_LIMITED':
    case 'BODY_TOO_LARGE':
    case 'HEADER_FIELDS_TOO_LARGE':
      return GrpcStatus.RESOURCE_EXHAUSTED;
    case 'SERVICE_NOT_FOUND':
    case 'NOT_FOUND':
    case 'METHOD_NOT_ALLOWED':
      return GrpcStatus.UNIMPLEMENTED;
    default:
      return grpcStatusOfHttp(status);
  }
}

/** gRPC's own mapping of an HTTP status (doc/http-grpc-status-mapping.md), for what {@link grpcStatusOf} does not name. */
function grpcStatusOfHttp(status: number): number {
  if (status === 401) return GrpcStatus.UNAUTHENTICATED;
  if (status === 403) return GrpcStatus.PERMISSION_DENIED;
  if (status === 400) return GrpcStatus.INVALID_ARGUMENT;
  if (status === 502 || status === 503) return GrpcStatus.UNAVAILABLE;
  if (status === 504) return GrpcStatus.DEADLINE_EXCEEDED;
  return status >= 500 ? GrpcStatus.INTERNAL : GrpcStatus.UNKNOWN;
}

/**
 * `message` as a `grpc-message` value: percent-encoded UTF-8, every byte outside printable ASCII and
 * `%` itself (PROTOCOL-HTTP2.md "Responses").
 */
export function encodeGrpcMessage(message: string): string {
  let encoded = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** Where a refused call's response keeps the HTTP status its refusal stands for. */
const kRefusalStatus = Symbol('gatehouse.grpcRefusalStatus');
type RefusedResponse = ServerResponse & { [kRefusalStatus]?: number };

/**
 * The HTTP status a gRPC refusal of the gateway's stands for (401 for UNAUTHENTICATED, say), or
 * undefined for any other response: what the access log records, since on the wire every gRPC
 * answer is a 200 and a refused call must not count as a served one. A target's own gRPC errors
 * are its answers: their 200 stands.
 */
export function refusalStatusOf(res: ServerResponse): number | undefined {
  return (res as RefusedResponse)[kRefusalStatus];
}

/**
 * Answers a gRPC call the gateway refuses with a trailers-only response (PROTOCOL-HTTP2.md
 * "Responses": HTTP status 200, the call's status in `grpc-status` and `grpc-message` on the only
 * HEADERS frame, which ends the stream), in the request's content type (`contentType`, so a
 * gRPC-Web client reads it as its own). `error`'s headers (`Retry-After` on a rate limit) and the
 * request id go along. Over HTTP/2 the frame is sent on the compat response's stream itself: the
 * compat `end()` sends HEADERS and then an empty end of stream, which gRPC clients read as a call
 * ended without a status. Over HTTP/1.1 (gRPC-Web) it is a head with no body.
 */
export function sendGrpcFailure(res: ServerResponse, error: GatewayError, contentType: string): void {
  (res as RefusedResponse)[kRefusalStatus] = error.status;
  const fields = withRequestId(res, {
    ...error.headers,
    'content-type': contentType,
    'grpc-status': String(grpcStatusOf(error.code, error.status)),
    'grpc-message': encodeGrpcMessage(error.message),
    'cache-control': 'no-store',
  });
  // `Connection: close` (a 408's) is HTTP/1.1's alone: HTTP/2 forbids it (RFC 9113 §8.2.2).
  if (respondTrailersOnly(res, 200, { ...fields, connection: undefined })) return;
  res.writeHead(200, fields);
  res.end();
}

/**
 * Over HTTP/2, answers `res` with one HEADERS frame (`statusCode`, `fields`; an undefined field is
 * left out) that ends the stream: a gRPC trailers-only answer (PROTOCOL-HTTP2.md "Responses"),
 * which the compat response's `writeHead` and `end` cannot make (they send HEADERS, then an empty
 * end of stream, which gRPC clients read as a call ended without a status).
 * @returns false, having written nothing, when `res` is not an HTTP/2 response.
 */
export function respondTrailersOnly(res: ServerResponse, statusCode: number, fields: OutgoingHttpHeaders): boolean {
  const stream = (res as ServerResponse & { stream?: ServerHttp2Stream }).stream;
  if (stream === undefined) return false;
  const head: OutgoingHttpHeaders = { ':status': statusCode };
  for (const name in fields) if (fields[name] !== undefined) head[name] = fields[name];
  // A client gone meanwhile (the stream reset or closed) is answered by nobody.
  if (!stream.destroyed && !stream.closed && !stream.headersSent) stream.respond(head, { endStream: true });
  return true;
}
