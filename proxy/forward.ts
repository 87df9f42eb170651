import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, Pool, type Dispatcher } from 'undici';
import { GatewayError } from '../shared/errors.js';
import { sendError } from '../shared/http-response.js';
import type { Logger } from '../shared/logger.js';
import { mapResponseHeaders } from './response-headers.js';
import type { Route } from './route-table.js';
import { TrailerDispatcher } from './trailer-dispatch.js';
import { relayableTrailers, trailerToAnnounce } from './trailers.js';
import { tunnel } from './tunnel.js';
import { errorCode } from '../shared/error-code.js';
import { failureKind, upstreamError, type UpstreamFailureCounter, type UpstreamFailureKind } from './upstream-errors.js';

/** Most connections kept to one target origin; further requests queue in the pool. */
const CONNECTIONS_PER_ORIGIN = 128;
/** Longest wait for a TCP/TLS connect (undici's default), shortened to UPSTREAM_TIMEOUT when that is less. */
const MAX_CONNECT_TIMEOUT_MS = 10_000;

/**
 * A reason phrase relayed as the target sent it: HTAB, SP and visible ASCII. RFC 9112 §4 also
 * allows obs-text, but undici hands it over decoded as UTF-8, which Node either refuses to write
 * (a character above U+00FF: the client would never get an answer) or writes as other bytes.
 */
const RELAYABLE_REASON = /^[\t\x20-\x7e]+$/;

/** What follows a forwarded request's head: nothing, the client's body, or a WebSocket upgrade. */
export type ForwardMode = 'no-body' | 'body' | 'websocket';

/**
 * Where a request is forwarded: a service's {@link Route}, or the admin process of split mode
 * ({@link AdminProcessTarget}).
 */
export type ForwardTarget = Route | AdminProcessTarget;

/**
 * The admin process as a target (split mode, admin-handoff.ts). What it answers is the gateway's
 * own: its response heads reach the client unmapped (see `mapResponseHeaders`), and its failures
 * are no service's, so they get the same answers as a service's (503, 504 after UPSTREAM_TIMEOUT,
 * 502) and are logged, but are not counted in `gatehouse_upstream_errors_total`.
 */
export interface AdminProcessTarget {
  /** ADMIN_INTERNAL_URL's origin (`http://host:port`): the pool key. */
  readonly origin: string;
  /** No service: what tells this target from a {@link Route}. */
  readonly service: undefined;
}

export interface ForwarderOptions {
  /**
   * UPSTREAM_TIMEOUT, in ms: the longest wait for a target's response headers once the request
   * has been sent whole (then 504), and the longest a client may pause while sending a request
   * body (then 408).
   */
  headersTimeoutMs: number;
  logger: Logger;
  /**
   * Counts each failure of a service's target by service and kind
   * (`gatehouse_upstream_errors_total`). A forwarder only for the admin process has none.
   */
  failures?: UpstreamFailureCounter;
}

/**
 * Step 7 of the data plane (design.md §3.6): sends a request to its target with undici and streams
 * the response back, never buffering either body. One keep-alive `Pool` per target origin. The
 * split-mode hand-off of gateway-owned paths to the admin process goes through it too
 * (admin-handoff.ts), with a forwarder of its own.
 */
export class UpstreamForwarder {
  readonly #pools = new Map<string, Pool>();
  readonly #options: ForwarderOptions;
  #trailerDispatcher: TrailerDispatcher | undefined;

  constructor(options: ForwarderOptions) {
    this.#options = options;
  }

  /**
   * Forwards `req` to `target`'s origin at `path` (the target-side path and query) with `headers`
   * (a flat `[name, value, …]` list). `mode` says what follows the head: nothing, `req` streamed
   * as the body, or a WebSocket upgrade (then a 101 joins the client's socket to the target's).
   * The response, or the 502/503/504 for a failure, is written to `res`; if the client goes away
   * first, the upstream request is aborted.
   *
   * With a body, the wait for the response starts when the client's body has arrived whole (its
   * `end`), not at dispatch: undici's own headers timeout would count the upload too and cut any
   * upload slower than UPSTREAM_TIMEOUT. Until then the client's socket may not sit idle longer
   * than UPSTREAM_TIMEOUT (408, connection closed, upstream request aborted).
   *
   * `trailerNames` (a chunked body's announced trailer fields that may go along, from
   * `RequestHeaderBuilder.trailerNames`) sends the request with its trailer section through
   * trailer-dispatch.ts instead of undici, which cannot send one.
   */
  forward(
    req: IncomingMessage,
    res: ServerResponse,
    target: ForwardTarget,
    path: string,
    headers: string[],
    mode: ForwardMode,
    trailerNames?: string[],
  ): void {
    const exchange = new UpstreamExchange(res, target, this.#options);
    (res as ExchangeCarrier)[kExchange] = exchange;
    res.on('close', onClientClose);
    res.on('drain', onClientDrain);
    const withBody = mode === 'body';
    const options: Dispatcher.DispatchOptions = {
      path,
      method: req.method as Dispatcher.HttpMethod,
      headers,
      body: withBody ? req : null,
      upgrade: mode === 'websocket' ? 'websocket' : null,
      headersTimeout: withBody ? 0 : null, // 0: off; the exchange times the response instead
    };
    if (withBody) exchange.timeUpload(req, this.#options.headersTimeoutMs);
    if (withBody && trailerNames !== undefined) {
      const request = { origin: target.origin, method: options.method, path, headers, body: req, trailerNames };
      this.#trailerDispatcher ??= new TrailerDispatcher(CONNECTIONS_PER_ORIGIN, this.#connectTimeoutMs());
      this.#trailerDispatcher.dispatch(request, exchange);
    } else {
      this.#pool(target.origin).dispatch(options, exchange);
    }
  }

  /** Closes the pools of origins no route points at any more; in-flight requests finish first. */
  retain(origins: ReadonlySet<string>): void {
    for (const [origin, pool] of this.#pools) {
      if (origins.has(origin)) continue;
      this.#pools.delete(origin);
      void pool.close().catch(() => {});
    }
  }

  /** Closes every pool once its in-flight requests are done. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    this.#trailerDispatcher?.close();
    await Promise.all(pools.map((pool) => pool.close()));
  }

  #connectTimeoutMs(): number {
    return Math.min(this.#options.headersTimeoutMs, MAX_CONNECT_TIMEOUT_MS);
  }

  #pool(origin: string): Pool {
    let pool = this.#pools.get(origin);
    if (pool === undefined) {
      pool = new Pool(origin, {
        connections: CONNECTIONS_PER_ORIGIN,
        pipelining: 1,
        headersTimeout: this.#options.headersTimeoutMs,
        connect: { timeout: this.#connectTimeoutMs() },
      });
      this.#pools.set(origin, pool);
    }
    return pool;
  }
}

/** True when the target's reason phrase differs from Node's standard one and can be relayed as it is. */
function hasOwnReason(statusCode: number, statusMessage: string | undefined): statusMessage is string {
  return statusMessage !== undefined && statusMessage !== STATUS_CODES[statusCode] && RELAYABLE_REASON.test(statusMessage);
}

/** Where a response finds its exchange from inside an event listener, without a closure per request. */
const kExchange = Symbol('gatehouse.upstreamExchange');
type ExchangeCarrier = ServerResponse & { [kExchange]?: UpstreamExchange };

function onClientClose(this: ServerResponse): void {
  (this as ExchangeCarrier)[kExchange]?.clientClosed();
}

function onClientDrain(this: ServerResponse): void {
  (this as ExchangeCarrier)[kExchange]?.clientDrained();
}

/** The abort reason given to undici when the client disconnects before the response is done. */
class ClientClosedError extends Error {
  readonly code = 'GATEHOUSE_CLIENT_CLOSED';
  constructor() {
    super('client closed the connection');
    this.name = 'ClientClosedError';
  }
}

/**
 * One request in flight: undici's dispatch handler (response start, data, end, error), writing
 * straight into the client's response with its backpressure (pause on a full socket, resume on
 * `drain`).
 */
class UpstreamExchange implements Dispatcher.DispatchHandler {
  readonly #res: ServerResponse;
  readonly #target: ForwardTarget;
  readonly #logger: Logger;
  readonly #failures: UpstreamFailureCounter | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #clientGone = false;
  /** Set once the response (or its failure) has begun: no timeout applies any more. */
  #answered = false;
  #responseTimer: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, target: ForwardTarget, options: ForwarderOptions) {
    this.#res = res;
    this.#target = target;
    this.#logger = options.logger;
    this.#failures = options.failures;
  }

  /**
   * Times a request with a body: while it arrives, an idle client socket for `timeoutMs` is a
   * stalled upload (408); once it has arrived whole, the target has `timeoutMs` to start its
   * response (504, as undici's headers timeout would give).
   */
  timeUpload(req: IncomingMessage, timeoutMs: number): void {
    req.setTimeout(timeoutMs, () => this.#uploadStalled());
    req.once('end', () => {
      req.setTimeout(0);
      if (this.#answered) return;
      this.#responseTimer = setTimeout(() => {
        if (!this.#answered) this.#controller?.abort(new errors.HeadersTimeoutError());
      }, timeoutMs);
    });
  }

  /** The client stopped sending its body: give up on the target, answer 408 and close. */
  #uploadStalled(): void {
    if (this.#answered || this.#res.destroyed) return;
    this.#answered = true;
    this.#clientGone = true; // what undici reports for the aborted request is not the client's answer
    this.#controller?.abort(new ClientClosedError());
    if (this.#res.headersSent) this.#res.destroy();
    else sendError(this.#res, new GatewayError('REQUEST_TIMEOUT', { headers: { connection: 'close' } }));
  }

  /** The response has started or failed: stop timing. */
  #answer(): void {
    this.#answered = true;
    clearTimeout(this.#responseTimer);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#clientGone) controller.abort(new ClientClosedError());
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    if (statusCode < 200) return; // 1xx interim responses are not relayed
    this.#answer();
    if (this.#res.destroyed) {
      controller.abort(new ClientClosedError());
      return;
    }
    const mapped = this.#responseHeaders(headers);
    const trailer = trailerToAnnounce(this.#res, statusCode, headers);
    if (trailer !== undefined) mapped.push('trailer', trailer);
    // A reason phrase of its own is relayed when it can be; otherwise Node writes the standard one.
    // A status Node cannot write (outside 100–999) throws, and undici then reports the error to
    // onResponseError: 502.
    if (hasOwnReason(statusCode, statusMessage)) this.#res.writeHead(statusCode, statusMessage, mapped);
    else this.#res.writeHead(statusCode, mapped);
  }

  /**
   * The target switched protocols (RFC 9110 §15.2.2): relay its 101 head, then join the sockets.
   * `Connection` and `Upgrade` are hop-by-hop, so they are set afresh after the mapping.
   */
  onRequestUpgrade(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    upstream: Duplex,
  ): void {
    const client = this.#res.socket;
    if (this.#clientGone || client === null || client.destroyed) {
      upstream.destroy();
      return;
    }
    const mapped = this.#responseHeaders(headers);
    mapped.push('connection', 'Upgrade', 'upgrade', headers.upgrade ?? 'websocket');
    this.#res.writeHead(statusCode, mapped);
    this.#res.end();
    tunnel(client, upstream);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.#res.write(chunk)) controller.pause();
  }

  /**
   * The target's response is complete: its trailer fields (RFC 9110 §6.5) go to the client at the
   * end of the chunked body Node writes, when it writes one (see trailers.ts).
   */
  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    const relayed = this.#res.chunkedEncoding ? relayableTrailers(trailers) : undefined;
    if (relayed !== undefined) this.#res.addTrailers(relayed);
    this.#res.end();
  }

  /** The target failed (a client that left is not its failure): counted, logged, answered. */
  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#answer();
    if (this.#clientGone || this.#res.destroyed) return;
    const kind = failureKind(error);
    this.#report(kind, errorCode(error));
    // After the head was sent the status cannot change: cut the connection so the client sees
    // a truncated response rather than a complete-looking one.
    if (this.#res.headersSent) this.#res.destroy();
    else sendError(this.#res, upstreamError(kind));
  }

  /** The client's response closed: if it had not finished, the client left, so stop upstream. */
  clientClosed(): void {
    clearTimeout(this.#responseTimer);
    if (this.#res.writableFinished) return;
    this.#clientGone = true;
    this.#controller?.abort(new ClientClosedError());
  }

  clientDrained(): void {
    this.#controller?.resume();
  }

  /** The target's response head as the client gets it: a service's mapped, the admin process's as it is. */
  #responseHeaders(headers: Record<string, string | string[] | undefined>): (string | string[])[] {
    const target = this.#target;
    return target.service === undefined ? mapResponseHeaders(headers) : mapResponseHeaders(headers, target);
  }

  /**
   * Counts and logs a failure: a service's under its id; the admin process's only logged, at error
   * (every sign-in and console request depends on it), since it is no service's.
   */
  #report(kind: UpstreamFailureKind, code: string | undefined): void {
    const { service } = this.#target;
    if (service === undefined) {
      this.#logger.error({ kind, code }, 'admin process request failed');
      return;
    }
    this.#failures?.upstreamError(service.id, kind);
    this.#logger.warn({ serviceId: service.id, code }, 'upstream request failed');
  }
}
