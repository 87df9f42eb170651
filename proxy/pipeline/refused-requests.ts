import type { AccessLogSink } from '../../shared/backends/access-log-sink.js';
import { eventId } from '../../shared/event-id.js';
import type { AccessLogEntry } from '../../shared/types.js';
import { loggedPath } from './logged-path.js';

const MINUTE_MS = 60_000;
/**
 * Summaries held at once (one per client address and service refused this minute). A client
 * spread over more addresses than this gets its summaries written early, never dropped: at most
 * this many records wait in memory, each with a path of at most 2 KiB.
 */
const MAX_PENDING = 10_000;

/** Counts refused requests as they are refused (gateway-metrics.ts), before any summary is written. */
export interface RefusalCounter {
  /** One request refused by the general rate limit; `serviceId` is '' when no service matched. */
  rateLimited(serviceId: string): void;
}

/** A request the general rate limit refused (design.md §3.3), as the access log summarises it. */
export interface RefusedRequest {
  serviceId: string;
  method: string;
  /** The raw request-target, as received. */
  target: string;
  /** The service host the request was routed by (AccessLogEntry `host`); null when routed by path alone. */
  host: string | null;
  /** True when the client spoke HTTP/2 (AccessLogEntry `protocol`); a summary keeps its first request's. */
  http2?: boolean;
  ipAddress: string;
  statusCode: number;
  /** Epoch ms at request start. */
  timestamp: number;
  /** From request start to the refusal, in ms. */
  responseTimeMs: number;
  /** The request's id (design.md §3.10); a summary keeps its first request's. */
  requestId: string | null;
}

/**
 * The access-log records of requests refused by the general rate limit (design.md §3.9): at most
 * one per client address, service and clock minute, carrying how many requests it stands for
 * (`count`) and the method, path, host and time of the first of them (a service on several hosts
 * gets one summary, named by the first request's host). A flood over the limit thus costs
 * the access log one record a minute per address and service, not one per request. A summary is
 * written when its minute ends (a timer, running only while summaries wait), when the same
 * address and service is refused in a later minute, or on {@link close}.
 */
export class RefusedRequests {
  readonly #sink: AccessLogSink;
  readonly #now: () => number;
  /** By `address \0 service id`; each entry's `timestamp` falls in its minute. */
  readonly #pending = new Map<string, AccessLogEntry & { count: number }>();
  #timer: NodeJS.Timeout | undefined;

  /** `now` is the clock in epoch ms (a test's own). */
  constructor(sink: AccessLogSink, now: () => number = Date.now) {
    this.#sink = sink;
    this.#now = now;
  }

  /** Counts one refused request into its address's and service's summary for the minute. */
  add(request: RefusedRequest): void {
    const key = `${request.ipAddress}\0${request.serviceId}`;
    const summary = this.#pending.get(key);
    if (summary !== undefined && minuteOf(summary.timestamp) === minuteOf(request.timestamp)) {
      summary.count++;
      return;
    }
    if (summary !== undefined) this.#write(key, summary);
    else if (this.#pending.size >= MAX_PENDING) this.flush();
    this.#pending.set(key, summaryOf(request));
    this.#schedule();
  }

  /** Writes every waiting summary now, whatever its minute. */
  flush(): void {
    for (const [key, summary] of this.#pending) this.#write(key, summary);
  }

  /** Writes every waiting summary and stops the timer (the process is stopping). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.flush();
  }

  #write(key: string, summary: AccessLogEntry): void {
    this.#pending.delete(key);
    this.#sink.write(summary);
  }

  /** Wakes at the next minute's start to write the summaries of the minutes before it. */
  #schedule(): void {
    if (this.#timer !== undefined) return;
    const now = this.#now();
    this.#timer = setTimeout(() => this.#minuteEnded(), (minuteOf(now) + 1) * MINUTE_MS - now).unref();
  }

  #minuteEnded(): void {
    this.#timer = undefined;
    const current = minuteOf(this.#now());
    for (const [key, summary] of this.#pending) if (minuteOf(summary.timestamp) < current) this.#write(key, summary);
    if (this.#pending.size > 0) this.#schedule();
  }
}

function minuteOf(epochMs: number): number {
  return Math.floor(epochMs / MINUTE_MS);
}

function summaryOf(request: RefusedRequest): AccessLogEntry & { count: number } {
  const path = loggedPath(request.target);
  const summary: AccessLogEntry & { count: number } = {
    eventId: eventId(request.timestamp),
    serviceId: request.serviceId,
    userId: null,
    path,
    method: request.method,
    statusCode: request.statusCode,
    responseTimeMs: request.responseTimeMs,
    ipAddress: request.ipAddress,
    timestamp: request.timestamp,
    target: null,
    count: 1,
  };
  if (request.host !== null) summary.host = request.host;
  if (request.http2 === true) summary.protocol = 'h2';
  if (request.requestId !== null) summary.requestId = request.requestId;
  if (path !== request.target) summary.pathTruncated = true;
  return summary;
}
