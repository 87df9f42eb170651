import type { ServerResponse } from 'node:http';
import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { loggedPath } from './logged-path.js';
import type { RefusedRequests } from './refused-requests.js';
import { refusalStatusOf } from '../../shared/http/grpc-failure.js';

/**
 * Status logged for a request whose client left before any response head was sent (nginx's
 * convention; no status was returned, and 200, Node's default, would be a lie).
 */
export const CLIENT_CLOSED_REQUEST = 499;

/** Where a response finds its record from inside the `close` listener, without a closure per request. */
const kRecord = Symbol('gatehouse.accessRecord');
type RecordCarrier = ServerResponse & { [kRecord]?: AccessRecord };

/**
 * Step 9 of the data plane (design.md §3.9): the access-log record of one request matched to a
 * service, whatever its outcome. Opened as soon as the service is known; written to the sink
 * exactly once, when the response closes (Node emits `close` after `finish`, and also when the
 * client disconnects first).
 */
export class AccessRecord {
  /** The session's subject, once known; null for an anonymous request. */
  userId: string | null = null;
  /** The url of the target that answered, once one has (exchange.ts); null while none has. */
  target: string | null = null;
  /** The host the request named when a service names it (host-routes.ts), else null: the path's service was reached on any host. */
  host: string | null = null;
  /** The request's id (design.md §3.10), once known. */
  requestId: string | null = null;
  /** True when the client spoke HTTP/2 (design.md §4.17). */
  http2 = false;
  /** The trace and server span of a traced (sampled) request; null while untraced. */
  trace: { traceId: string; spanId: string } | null = null;
  /** True for the verify endpoint's decision about an ingress's request (design.md §4.19), not a proxied request. */
  verify = false;
  readonly #sink: AccessLogSink;
  readonly #serviceId: string;
  readonly #method: string;
  readonly #path: string;
  readonly #ipAddress: string;
  /** Epoch ms at request start. */
  readonly #timestamp = Date.now();
  /** Monotonic ms at request start, for the response time. */
  readonly #started = performance.now();

  /**
   * Starts the record of the request answered by `res`. `path` is the raw request-target (path
   * and query) as received; `ipAddress` the resolved client address.
   */
  constructor(sink: AccessLogSink, res: ServerResponse, serviceId: string, method: string, path: string, ipAddress: string) {
    this.#sink = sink;
    this.#serviceId = serviceId;
    this.#method = method;
    this.#path = path;
    this.#ipAddress = ipAddress;
    (res as RecordCarrier)[kRecord] = this;
    res.on('close', onResponseClose);
  }

  /**
   * Hands the request over to the summaries of `refused` (refused-requests.ts) as answered
   * `statusCode` by the rate limit: this record is then never written on its own.
   */
  summariseInto(refused: RefusedRequests, res: ServerResponse, statusCode: number): void {
    (res as RecordCarrier)[kRecord] = undefined;
    refused.add({
      serviceId: this.#serviceId,
      method: this.#method,
      target: this.#path,
      host: this.host,
      http2: this.http2,
      requestId: this.requestId,
      ipAddress: this.#ipAddress,
      statusCode,
      timestamp: this.#timestamp,
      responseTimeMs: Math.round(performance.now() - this.#started),
    });
  }

  /**
   * Writes the record: status as sent (499 if none was; a gRPC refusal's HTTP equivalent, not its
   * 200), time from start to now in whole ms, the path cut to its stored maximum (logged-path.ts),
   * `pathTruncated` then set, `host` only
   * when the request was routed by one (a host-less service's records travel without the field),
   * and `protocol` only for HTTP/2.
   */
  finish(res: ServerResponse): void {
    const path = loggedPath(this.#path);
    const record: AccessLogEntry = {
      eventId: eventId(this.#timestamp),
      serviceId: this.#serviceId,
      userId: this.userId,
      path,
      method: this.#method,
      statusCode: res.headersSent ? (refusalStatusOf(res) ?? res.statusCode) : CLIENT_CLOSED_REQUEST,
      responseTimeMs: Math.round(performance.now() - this.#started),
      ipAddress: this.#ipAddress,
      timestamp: this.#timestamp,
      target: this.target,
    };
    if (this.host !== null) record.host = this.host;
    if (this.http2) record.protocol = 'h2';
    if (this.requestId !== null) record.requestId = this.requestId;
    if (this.trace !== null) {
      record.traceId = this.trace.traceId;
      record.spanId = this.trace.spanId;
    }
    if (path !== this.#path) record.pathTruncated = true;
    if (this.verify) record.verify = true;
    this.#sink.write(record);
  }
}

function onResponseClose(this: ServerResponse): void {
  const record = (this as RecordCarrier)[kRecord];
  (this as RecordCarrier)[kRecord] = undefined;
  record?.finish(this);
}
