import type { IncomingMessage } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import { isH2cOrigin } from './http2-targets.js';
import { Http2Dispatcher } from './http2-dispatch.js';
import { TrailerDispatcher } from './trailer-dispatch.js';

/** Most connections kept to one target origin; further requests queue in the pool. */
const CONNECTIONS_PER_ORIGIN = 128;
/** Longest wait for a TCP/TLS connect (undici's default), shortened to UPSTREAM_TIMEOUT when that is less. */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The connections a forwarder keeps to its targets: one keep-alive undici `Pool` per origin
 * (HTTP/1.1, pipelining off), and node:http agents for the rare request that sends a trailer
 * section (trailer-dispatch.ts). HTTP/2 goes through http2-dispatch.ts: to an `h2c://` target
 * always (cleartext, prior knowledge), and to an `https://` one for a request that needs it (a
 * gRPC call), by ALPN. Each attempt of an exchange is dispatched through it.
 */
export class UpstreamConnections {
  /**
   * UPSTREAM_TIMEOUT, in ms: the longest wait for a target's response headers once the request
   * has been sent whole (then 504), and the longest a client may pause while sending a request
   * body (then 408). Retries on another target start only within it.
   */
  readonly headersTimeoutMs: number;
  readonly #pools = new Map<string, Pool>();
  #http2: Http2Dispatcher | undefined;
  #trailerDispatcher: TrailerDispatcher | undefined;

  constructor(headersTimeoutMs: number) {
    this.headersTimeoutMs = headersTimeoutMs;
  }

  /**
   * Sends one attempt of a request to `origin` (`http(s)://host:port`, `h2c://host:port`): over
   * HTTP/2 to an `h2c://` origin, or with `http2` (a gRPC call) to an `https://` one; else through
   * the origin's pool, or, when its body goes with `trailerNames` (announced trailer fields that may
   * be relayed), through trailer-dispatch.ts, since undici cannot send a trailer section.
   */
  dispatch(origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, trailerNames: string[] | undefined, http2 = false): void {
    if (isH2cOrigin(origin) || (http2 && origin.startsWith('https:'))) {
      this.#http2 ??= new Http2Dispatcher(this.#connectTimeoutMs(), this.headersTimeoutMs);
      this.#http2.dispatch(origin, options, handler);
    } else if (options.body !== null && trailerNames !== undefined) {
      const body = options.body as IncomingMessage;
      this.#trailerDispatcher ??= new TrailerDispatcher(CONNECTIONS_PER_ORIGIN, this.#connectTimeoutMs());
      this.#trailerDispatcher.dispatch({ origin, method: options.method, path: options.path, headers: options.headers as string[], body, trailerNames }, handler);
    } else {
      this.#pool(origin).dispatch(options, handler);
    }
  }

  /** Closes the pools of origins not in `origins` (no route points at them any more); in-flight requests finish first. */
  retain(origins: ReadonlySet<string>): void {
    for (const [origin, pool] of this.#pools) {
      if (origins.has(origin)) continue;
      this.#pools.delete(origin);
      void pool.close().catch(() => {});
    }
    this.#http2?.retain(origins);
  }

  /** Closes every pool once its in-flight requests are done. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await this.#http2?.close();
    this.#trailerDispatcher?.close();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  #connectTimeoutMs(): number {
    return Math.min(this.headersTimeoutMs, MAX_CONNECT_TIMEOUT_MS);
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        pipelining: 1,
        headersTimeout: this.headersTimeoutMs,
        connect: { timeout: this.#connectTimeoutMs() },
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }
}
