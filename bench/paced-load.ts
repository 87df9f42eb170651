/**
 * Open-loop load at a fixed rate, evenly paced: request i is due at `i / rate` s after the start,
 * and is sent when due whether or not earlier ones have been answered (up to `connections`
 * keep-alive connections; beyond that, requests wait in the client's queue and the wait counts
 * in their latency). Latency is measured with `performance.now()` (µs resolution) from the
 * moment a request is sent to the end of its response.
 *
 * Why not only autocannon's `overallRate`: autocannon grants each connection its share of the
 * rate at the start of every second, and the connection spends it back to back. At half the
 * maximum rate every connection is busy for the first half of each second and idle for the rest,
 * so the latencies it records are those of a saturated server (bursts), not of one at half load.
 */
import { Pool, type Dispatcher } from 'undici';
import { latencySummary } from './latency-summary.js';
import type { LoadCounts } from './load.js';

export interface PacedLoadOptions {
  url: string;
  /** Requests per second, evenly spaced. */
  rate: number;
  /** Run length, in s. */
  durationS: number;
  /** Most keep-alive connections open at once. */
  connections: number;
  headers?: Record<string, string>;
}

/**
 * What one paced run measured: {@link LoadCounts} with every response's latency (any status) to
 * 0.01 ms, `requestsPerSecond` over the run including the drain at the end, and every request sent
 * answered or failed before the run ends.
 */
export interface PacedLoadResult extends LoadCounts {
  /** Offered rate, requests/s. */
  rate: number;
  /** Requests that were due but sent late because this process was busy, as a share of all (0–1). */
  lateShare: number;
}

/** How often the scheduler wakes to send what is due, in ms. */
const TICK_MS = 1;
/** A request sent more than this after its due time counts as late, in ms. */
const LATE_MS = 2;

/**
 * Runs one paced load. Resolves once every request sent has been answered or has failed.
 */
export async function runPacedLoad(options: PacedLoadOptions): Promise<PacedLoadResult> {
  const target = new URL(options.url);
  const pool = new Pool(target.origin, { connections: options.connections, pipelining: 1 });
  const path = target.pathname + target.search;
  const headers = { ...(options.headers ?? {}), host: target.host };
  const total = Math.round(options.rate * options.durationS);
  const latencies = new Float64Array(total);
  let sent = 0;
  let answered = 0;
  let ok = 0;
  let non2xx = 0;
  let errors = 0;
  let late = 0;

  const started = performance.now();
  await new Promise<void>((resolve) => {
    const settle = (index: number, sentAt: number, status: number | undefined) => {
      latencies[index] = performance.now() - sentAt;
      if (status === undefined) errors++;
      else if (status >= 200 && status < 300) ok++;
      else non2xx++;
      if (++answered === total) resolve();
    };
    const send = (index: number) => {
      const sentAt = performance.now();
      let status: number | undefined;
      const handler: Dispatcher.DispatchHandler = {
        onRequestStart: () => {},
        onResponseStart: (_c, statusCode) => void (status = statusCode),
        onResponseData: () => {},
        onResponseEnd: () => settle(index, sentAt, status),
        onResponseError: () => settle(index, sentAt, undefined),
      };
      pool.dispatch({ path, method: 'GET', headers }, handler);
    };
    const timer = setInterval(() => {
      const now = performance.now();
      const due = Math.min(total, Math.floor(((now - started) / 1000) * options.rate) + 1);
      while (sent < due) {
        if (now - (started + (sent / options.rate) * 1000) > LATE_MS) late++;
        send(sent++);
      }
      if (sent === total) clearInterval(timer);
    }, TICK_MS);
  });
  const elapsedS = (performance.now() - started) / 1000;
  await pool.close();

  return {
    url: options.url,
    rate: options.rate,
    requestsPerSecond: Math.round(answered / elapsedS),
    latencyMs: latencySummary(latencies),
    responses2xx: ok,
    responsesNon2xx: non2xx,
    requestsSent: sent,
    errors,
    lateShare: total ? late / total : 0,
  };
}
