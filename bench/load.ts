/**
 * Load generation: one autocannon run, in this process (its HTTP clients run on this process's
 * event loop, or on `workers` worker threads), against a server in another process.
 */
import autocannon from 'autocannon';

export interface LoadOptions {
  url: string;
  /** Concurrent keep-alive connections, one request in flight on each. */
  connections: number;
  /** Run length, in s. */
  durationS: number;
  /** Fixed offered load, in requests/s across all connections; unset: as fast as responses come. */
  rate?: number;
  /** autocannon worker threads; 0 or unset: the clients run on this process's event loop. */
  workers?: number;
  headers?: Record<string, string>;
}

/** What both load generators count in a run. */
export interface LoadCounts {
  url: string;
  /** Responses received per second. */
  requestsPerSecond: number;
  /** Latency percentiles, in ms. */
  latencyMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** Responses received, by class. */
  responses2xx: number;
  responsesNon2xx: number;
  /** Requests written. */
  requestsSent: number;
  /** Connection errors and timeouts. */
  errors: number;
}

/**
 * What one autocannon run measured: {@link LoadCounts} with latencies of 2xx responses at
 * autocannon's resolution of 1 ms, `requestsPerSecond` = (2xx + non-2xx) / duration, and
 * `requestsSent` including those still in flight when the run stopped (and were cut off).
 */
export interface LoadResult extends LoadCounts {
  connections: number;
  /** Offered rate in requests/s, or null for a closed-loop (as fast as possible) run. */
  rate: number | null;
  /** Measured run length, in s. */
  durationS: number;
  timeouts: number;
}

/**
 * Runs autocannon once. A rated run records raw latencies (`ignoreCoordinatedOmission`):
 * autocannon's correction assumes a 1 ms expected interval whenever a rate is set, which would
 * add phantom samples to every response slower than 1 ms and make p99 meaningless at low load.
 * An https `url` needs nothing more: autocannon 8 connects with `rejectUnauthorized: false` over
 * whatever `tlsOptions` say (lib/httpClient.js), so the bench's self-signed certificate
 * (tls-certificate.ts) is accepted unverified; the readiness probes before a run do verify it.
 * @throws when autocannon cannot start (bad URL, nothing listening at all).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
    pipelining: 1,
    timeout: 10,
    ...(options.workers ? { workers: options.workers } : {}),
    ...(options.rate ? { overallRate: options.rate, ignoreCoordinatedOmission: true } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  const responses = result['2xx'] + result.non2xx;
  return {
    url: options.url,
    connections: options.connections,
    rate: options.rate ?? null,
    durationS: result.duration,
    requestsPerSecond: Math.round(responses / result.duration),
    latencyMs: {
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      max: result.latency.max,
      mean: result.latency.mean,
    },
    responses2xx: result['2xx'],
    responsesNon2xx: result.non2xx,
    requestsSent: result.requests.sent,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
