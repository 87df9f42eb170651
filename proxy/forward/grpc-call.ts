/**
 * What the data plane reads of a gRPC call (gRPC over HTTP/2, PROTOCOL-HTTP2.md): whether a request
 * is one, and its deadline. A gRPC call needs HTTP/2 to its target, trailers back, and no
 * upload-idle cut (a stream may stay quiet as long as its deadline allows); gRPC-Web
 * (`application/grpc-web…`) is ordinary HTTP/1.1 or HTTP/2 traffic and is passed through as it is.
 */

/** `application/grpc` and `application/grpc+<codec>` (any case), but not `application/grpc-web…`. */
const GRPC_CALL = /^application\/grpc(?:\+[^;]*)?(?:;|$)/i;

/** Whether a request with this `Content-Type` is a gRPC call proper (PROTOCOL-HTTP2.md "Requests": Content-Type). */
export function isGrpcCall(contentType: string | undefined): boolean {
  return contentType !== undefined && GRPC_CALL.test(contentType);
}

/** `grpc-timeout`: at most 8 digits and a unit (PROTOCOL-HTTP2.md "Requests": Timeout). */
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;

/** Milliseconds per unit of {@link GRPC_TIMEOUT}. */
const UNIT_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000001 };

/**
 * A call's `grpc-timeout` in ms, rounded up to a whole ms (a deadline is never made shorter than
 * the client asked); undefined when absent or malformed (then no deadline of the client's applies).
 */
export function grpcTimeoutMs(value: string | string[] | undefined): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = GRPC_TIMEOUT.exec(value);
  return match === null ? undefined : Math.ceil(Number(match[1]) * UNIT_MS[match[2]!]!);
}
