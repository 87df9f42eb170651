/**
 * The closed loop of the load thread's clients (http2-load.ts, grpc-load.ts): `concurrency`
 * loops, each sending one request and the next as soon as the last is answered, until
 * `durationS` has passed. Requests in flight then are waited for (each is bounded by its client's
 * timeout), so every request sent has been answered or has failed when the run ends: the
 * access-log check counts them exactly, with none in flight at stops.
 */
import { latencySummary } from './latency-summary.js';
import type { LoadResult } from './load.js';

/** How one request ended: an answer by its class (gRPC: status OK, or another status), or none. */
export type Outcome = '2xx' | 'non-2xx' | 'error' | 'timeout';

export interface ClosedLoopOptions {
  /** What is loaded, for the result. */
  url: string;
  /** Requests in flight at once (streams, or gRPC calls). */
  concurrency: number;
  /** Time new requests are sent for, in s. */
  durationS: number;
}

/**
 * Runs `send` in the closed loop. Latencies are of every answer (any class), with
 * `performance.now()` from sending to the end of the answer, in ms; `durationS` and
 * `requestsPerSecond` include the drain of the last requests.
 */
export async function runClosedLoop(options: ClosedLoopOptions, send: () => Promise<Outcome>): Promise<LoadResult> {
  const latencies: number[] = [];
  const counts: Record<Outcome, number> = { '2xx': 0, 'non-2xx': 0, error: 0, timeout: 0 };
  const started = performance.now();
  const deadline = started + options.durationS * 1000;
  const loop = async () => {
    while (performance.now() < deadline) {
      const sentAt = performance.now();
      const outcome = await send();
      counts[outcome]++;
      if (outcome === '2xx' || outcome === 'non-2xx') latencies.push(performance.now() - sentAt);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  const durationS = (performance.now() - started) / 1000;
  const responses = counts['2xx'] + counts['non-2xx'];
  return {
    url: options.url,
    connections: options.concurrency,
    rate: null,
    durationS,
    requestsPerSecond: Math.round(responses / durationS),
    latencyMs: latencySummary(Float64Array.from(latencies)),
    responses2xx: counts['2xx'],
    responsesNon2xx: counts['non-2xx'],
    requestsSent: responses + counts.error + counts.timeout,
    errors: counts.error + counts.timeout,
    timeouts: counts.timeout,
  };
}
