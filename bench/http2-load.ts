/**
 * HTTP/2 load over TLS (ALPN h2) for the h2 rows: `sessions` node:http2 client sessions (one TLS
 * connection each) sharing `streams` concurrent streams evenly, in the closed loop of
 * closed-loop.ts: a GET per stream, the next as soon as its answer has ended. The bench's
 * self-signed certificate is verified (`caFile`), unlike autocannon's HTTPS. Runs in the load
 * thread (load-thread.ts), never in a measured process.
 */
import { readFileSync } from 'node:fs';
import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { runClosedLoop, type Outcome } from './closed-loop.js';
import type { LoadResult } from './load.js';

export interface Http2LoadOptions {
  /** `https://127.0.0.1:PORT/path`. */
  url: string;
  /** PEM file the server's certificate must chain to (the bench's self-signed one). */
  caFile: string;
  /** Connections (sessions). */
  sessions: number;
  /** Concurrent streams over all sessions (each request on the next session, round robin). */
  streams: number;
  /** Run length, in s. */
  durationS: number;
  /** Request fields, e.g. the session cookie. */
  headers?: Record<string, string>;
}

/** A stream unanswered this long is cancelled and counted as a timeout, in ms (autocannon's 10 s). */
const STREAM_TIMEOUT_MS = 10_000;

/**
 * Runs one load; every session is connected before the clock starts, and closed after. A session
 * the server ends meanwhile is not made again: its streams count as errors.
 */
export async function runHttp2Load(options: Http2LoadOptions): Promise<LoadResult> {
  const target = new URL(options.url);
  const ca = readFileSync(options.caFile);
  const sessions = await Promise.all(Array.from({ length: options.sessions }, () => connected(connect(target.origin, { ca }))));
  const request = { ':method': 'GET', ':path': target.pathname + target.search, ...options.headers };
  let next = 0;
  try {
    return await runClosedLoop({ url: options.url, concurrency: options.streams, durationS: options.durationS }, () => get(sessions[next++ % sessions.length]!, request));
  } finally {
    await Promise.all(sessions.map((session) => new Promise<void>((resolve) => session.close(resolve))));
  }
}

/** Resolves with `session` once connected (TLS and the HTTP/2 preface); rejects on its error. */
function connected(session: ClientHttp2Session): Promise<ClientHttp2Session> {
  session.on('error', () => {}); // a failed session fails its streams; the loop counts those
  return new Promise((resolve, reject) => {
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

/** One request on `session`, its body read and dropped; how it ended. */
function get(session: ClientHttp2Session, request: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    let stream;
    try {
      stream = session.request(request, { endStream: true });
    } catch {
      return resolve('error'); // the session is gone
    }
    let status: number | undefined;
    let timedOut = false;
    stream.on('response', (headers) => void (status = Number(headers[':status'])));
    stream.on('error', () => {});
    stream.setTimeout(STREAM_TIMEOUT_MS, () => {
      timedOut = true;
      stream.close(constants.NGHTTP2_CANCEL);
    });
    stream.resume();
    stream.on('close', () => {
      if (timedOut) resolve('timeout');
      else if (status === undefined || stream.rstCode !== constants.NGHTTP2_NO_ERROR) resolve('error');
      else resolve(status >= 200 && status < 300 ? '2xx' : 'non-2xx');
    });
  });
}
