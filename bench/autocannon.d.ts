/**
 * The part of autocannon 8's programmatic API the benchmark uses. The package ships no type
 * declarations (`@types/autocannon` is not a dependency), so this keeps bench/ strict.
 */
declare module 'autocannon' {
  export interface Options {
    url: string;
    /** Concurrent connections (each with one request in flight, `pipelining` 1). */
    connections?: number;
    pipelining?: number;
    /** Run length in seconds. */
    duration?: number;
    /** Stop after this many requests instead of after `duration`. */
    amount?: number;
    /** Worker threads generating the load (autocannon splits connections and rate among them). */
    workers?: number;
    /** Requests per second across all connections. */
    overallRate?: number;
    /** Record raw latencies, without correcting for coordinated omission. */
    ignoreCoordinatedOmission?: boolean;
    headers?: Record<string, string>;
    method?: string;
    /** Seconds before a request counts as timed out. */
    timeout?: number;
    title?: string;
  }

  /** Percentiles, mean and the like of one histogram. */
  export interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p97_5: number;
    p99: number;
    p99_9: number;
    total: number;
  }

  export interface Result {
    /** Latencies in ms. */
    latency: Histogram;
    /** Per-second request counts; `sent` is every request written. */
    requests: Histogram & { sent: number };
    throughput: Histogram;
    /** Seconds. */
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '1xx': number;
    '2xx': number;
    '3xx': number;
    '4xx': number;
    '5xx': number;
    statusCodeStats: Record<string, { count: number }>;
  }

  function autocannon(options: Options): Promise<Result>;
  export default autocannon;
}
