/** An access-log record as the API shows it (interface.md §2.2); `user_id` is null for anonymous requests. */
export interface AccessLogRecord {
  id: number;
  service_id: string;
  user_id: string | null;
  path: string;
  method: string;
  status_code: number;
  response_time_ms: number;
  ip_address: string;
  /** ISO 8601 UTC. */
  timestamp: string;
  /** The url of the service's target that answered; null when none did (the gateway answered). */
  target: string | null;
  /**
   * The service host the request was routed by (design.md §3.2; `app.example.com`, or the name a
   * wildcard matched); null when it was routed by path alone, and for records stored before hosts.
   */
  host: string | null;
  /** The protocol the client spoke (design.md §4.17): `h2` for HTTP/2 (over TLS or h2c), else `http/1.1` (records stored before HTTP/2 too). */
  protocol: 'http/1.1' | 'h2';
  /**
   * How many requests the record stands for: 1, or more for a summary of one client address's
   * requests to the service within one minute and status class (refused by the rate limit, or
   * past the address's share of the day's budget); its other fields are the first request's.
   */
  count: number;
  /** True when `path` was cut to the stored maximum (2,048 bytes) and ends with `…`. */
  path_truncated: boolean;
  /**
   * The request's id (design.md §3.10), the `X-Request-Id` its answer carried: 16 lowercase hex
   * characters, a traced request's trace id (32), or a trusted proxy's id; null for records of
   * proxies older than request ids.
   */
  request_id: string | null;
  /** A traced (sampled) request's trace id, 32 lowercase hex characters (W3C Trace Context); null when untraced. */
  trace_id: string | null;
  /** A traced request's server span id, 16 lowercase hex characters; null when untraced. */
  span_id: string | null;
  /**
   * Present (true) on the verify endpoint's decision about an ingress's request (design.md §4.19):
   * `path` and `method` are the original request's, which the gateway judged and did not forward.
   */
  verify?: true;
}

/**
 * How many records, newest first, the row-by-row filters (`method`, `path`, `host`, `requestId`,
 * `user`) examine after the service, status class and time range have narrowed them: those
 * filters are not counted in advance, so this bounds the rows a page and its total may visit.
 */
export const RESIDUAL_SCAN_LIMIT = 100_000;

/** A page of a service's access log (interface.md §4.2). */
export interface AccessLogPage {
  logs: AccessLogRecord[];
  /**
   * How many records pass the filters. Exact for the service, status class and time range (read
   * from the day files' per-minute counts, not by counting rows); with `method`, `path`, `user`,
   * `host` or `requestId`, the matches among the newest {@link RESIDUAL_SCAN_LIMIT} records the
   * other filters pass.
   */
  total: number;
  /**
   * Present (true) when `method`, `path`, `host`, `requestId` or `user` filtered and more than
   * {@link RESIDUAL_SCAN_LIMIT} records passed the other filters: `logs` and `total` then cover
   * only the newest of those, and `total` is a lower bound.
   */
  partial?: true;
}
