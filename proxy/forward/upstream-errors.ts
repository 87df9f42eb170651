import { errorCode } from '../../shared/error-code.js';
import { GatewayError } from '../../shared/errors.js';

/**
 * Failures that mean the target could not be reached at all (design.md §3.8 → 503): refused, no
 * route, name not resolved, connect timeout. Matched on stable `code`s (undici's `UND_ERR_*` and
 * Node's system error codes), never on message text.
 */
const UNREACHABLE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** No response headers within UPSTREAM_TIMEOUT (design.md §3.8 → 504). */
const TIMED_OUT: ReadonlySet<string> = new Set(['UND_ERR_HEADERS_TIMEOUT']);

/**
 * How a target failed, as counted in `gatehouse_upstream_errors_total{kind}`: `unavailable` (it
 * could not be reached), `timeout` (no response headers in time), `bad_gateway` (anything else).
 */
export type UpstreamFailureKind = 'unavailable' | 'timeout' | 'bad_gateway';

/** Where the data plane counts target failures (`GatewayMetrics`, gateway-metrics.ts). */
export interface UpstreamFailureCounter {
  /** Counts one failure of the target of service `serviceId` (its registry id). */
  upstreamError(serviceId: string, kind: UpstreamFailureKind): void;
}

/** The {@link UpstreamFailureKind} of an error undici reported for a forwarded request. */
export function failureKind(error: unknown): UpstreamFailureKind {
  const code = errorCode(error);
  if (code !== undefined && UNREACHABLE.has(code)) return 'unavailable';
  if (code !== undefined && TIMED_OUT.has(code)) return 'timeout';
  return 'bad_gateway';
}

const ANSWERS = {
  unavailable: 'SERVICE_UNAVAILABLE',
  timeout: 'GATEWAY_TIMEOUT',
  bad_gateway: 'BAD_GATEWAY',
} as const;

/**
 * The client-facing error for an upstream failure that happened before response headers were
 * sent: 503 `Service unavailable` when the target cannot be reached, 504 `Gateway timeout` when it
 * sent no headers in time, 502 `Bad gateway` for anything else (reset, closed early, malformed
 * response, TLS failure).
 */
export function upstreamError(kind: UpstreamFailureKind): GatewayError {
  return new GatewayError(ANSWERS[kind]);
}
