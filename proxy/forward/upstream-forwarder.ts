import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, Pool, type Dispatcher } from 'undici';
import { GatewayError } from '../../shared/errors.js';
import { sendError } from '../../shared/http/http-response.js';
import type { Logger } from '../../shared/logger.js';
import { mapResponseHeaders } from '../headers/response-headers.js';
import type { AccessRecord } from '../pipeline/access-record.js';
import type { BalancingInput } from '../pool/balancing/balancer.js';
import { joinPath } from '../routing/path-mapping.js';
import { isGatewayFailure, mayRetry } from '../pool/retry-policy.js';
import type { Route } from '../routing/route-table.js';
import { stickyCookie } from '../pool/sticky-target.js';
import type { RouteTarget } from '../pool/target-pool.js';
import { TrailerDispatcher } from './trailer-dispatch.js';
import { relayableTrailers, trailerToAnnounce } from './trailers.js';
import { tunnel } from './tunnel.js';
import { errorCode } from '../../shared/error-code.js';
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
 * Where a request is forwarded: a service's {@link Route} (one of its pool's targets, retried on
 * another as retry-policy.ts allows), or the admin process of split mode ({@link AdminProcessTarget}).
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

/** What a request to a service brings besides its head: how its pool picks, and the sticky cookie. */
export interface ForwardExtras {
  /** The request's client address and sticky cookie, for the pool's balancer. */
  balancing: BalancingInput;
  /** Announced trailer fields to send along (see {@link UpstreamForwarder.forward}). */
  trailerNames?: string[] | undefined;
  /** The sticky cookie's name and whether it is Secure, when the pool balances by cookie. */
  sticky?: { name: string; secure: boolean } | undefined;
  /** The request's access-log record: told which target answered. */
  record?: AccessRecord | undefined;
}

export interface ForwarderOptions {
  /**
   * UPSTREAM_TIMEOUT, in ms: the longest wait for a target's response headers once the request
   * has been sent whole (then 504), and the longest a client may pause while sending a request
   * body (then 408). Retries on another target start only within it.
   */
  headersTimeoutMs: number;
  logger: Logger;
  /**
   * Counts each failure a client got from a service's targets, by service and kind
   * (`gatehouse_upstream_errors_total`). A forwarder only for the admin process has none.
   */
  failures?: UpstreamFailureCounter;
}

/**
 * Step 7 of the data plane (design.md §3.6): sends a request to a target with undici and streams
 * the response back, never buffering either body. One keep-alive `Pool` per target origin. A
 * service's request goes to the target its pool picks; a failure retry-policy.ts allows is sent
 * to another of its targets before the client hears of it, and every failure is told to outlier
 * detection (target-health.ts). The split-mode hand-off of gateway-owned paths to the admin
 * process goes through it too (admin-handoff.ts), with a forwarder of its own.
 */
export class UpstreamForwarder {
  readonly #pools = new Map<string, Pool>();
  readonly #options: ForwarderOptions;
  #trailerDispatcher: TrailerDispatcher | undefined;

  constructor(options: ForwarderOptions) {
    this.#options = options;
  }

  /**
   * Forwards `req` to `target` with `headers` (a flat `[name, value, …]` list): to the admin
   * process at `path`, or to a target of a route's pool at the target's base path joined with
   * `path` (what follows the prefix, and the query). `mode` says what follows the head: nothing,
   * `req` streamed as the body, or a WebSocket upgrade (then a 101 joins the client's socket to
   * the target's). The response, or the 502/503/504 for a failure, is written to `res`; if the
   * client goes away first, the upstream request is aborted.
   *
   * With a body, the wait for the response starts when the client's body has arrived whole (its
   * `end`), not at dispatch: undici's own headers timeout would count the upload too and cut any
   * upload slower than UPSTREAM_TIMEOUT. Until then the client's socket may not sit idle longer
   * than UPSTREAM_TIMEOUT (408, connection closed, upstream request aborted).
   *
   * `extras.trailerNames` (a chunked body's announced trailer fields that may go along, from
   * `RequestHeaderBuilder.trailerNames`) sends the request with its trailer section through
   * trailer-dispatch.ts instead of undici, which cannot send one.
   */
  forward(req: IncomingMessage, res: ServerResponse, target: ForwardTarget, path: string, headers: string[], mode: ForwardMode, extras?: ForwardExtras): void {
    const exchange = new UpstreamExchange(req, res, { target, path, headers, mode, extras }, this);
    (res as ExchangeCarrier)[kExchange] = exchange;
    res.on('close', onClientClose);
    res.on('drain', onClientDrain);
    if (mode === 'body') exchange.timeUpload(this.#options.headersTimeoutMs);
    exchange.start();
  }

  /** The forwarder's settings, as its exchanges read them. */
  get options(): ForwarderOptions {
    return this.#options;
  }

  /**
   * Sends one attempt of a request to `origin`: through the origin's pool, or with a trailer
   * section through trailer-dispatch.ts.
   */
  dispatch(origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler, trailerNames: string[] | undefined): void {
    if (options.body !== null && trailerNames !== undefined) {
      const body = options.body as IncomingMessage;
      this.#trailerDispatcher ??= new TrailerDispatcher(CONNECTIONS_PER_ORIGIN, this.#connectTimeoutMs());
      this.#trailerDispatcher.dispatch({ origin, method: options.method, path: options.path, headers: options.headers as string[], body, trailerNames }, handler);
    } else {
      this.#pool(origin).dispatch(options, handler);
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

/** A request forwarded without extras: no client address to hash, no sticky cookie. */
const NO_BALANCING_INPUT: BalancingInput = { clientIp: '', stickyId: undefined };

/** What an exchange sends: as {@link UpstreamForwarder.forward} was given it. */
interface ForwardRequest {
  target: ForwardTarget;
  path: string;
  headers: string[];
  mode: ForwardMode;
  extras: ForwardExtras | undefined;
}

/**
 * One client request in flight, over one or more attempts ({@link UpstreamAttempt}): writes the
 * answering attempt's response straight into the client's, with its backpressure (pause on a full
 * socket, resume on `drain`), and decides after each failed attempt whether another target gets
 * the request (retry-policy.ts).
 */
class UpstreamExchange {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #request: ForwardRequest;
  readonly #forwarder: UpstreamForwarder;
  readonly #startedAt = Date.now();
  /** The attempt whose answer counts; earlier ones are aborted and their events ignored. */
  #attempt: UpstreamAttempt | undefined;
  /** Targets tried so far, once a second one is wanted. */
  #tried: RouteTarget[] | undefined;
  #retriesLeft: number;
  /** The target the sticky cookie names failed this request without answering (dead, or resetting). */
  #stickyTargetLost = false;
  #clientGone = false;
  /** Set once the response (or its failure) has begun: no timeout applies any more. */
  #answered = false;
  #responseTimer: NodeJS.Timeout | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, request: ForwardRequest, forwarder: UpstreamForwarder) {
    this.#req = req;
    this.#res = res;
    this.#request = request;
    this.#forwarder = forwarder;
    this.#retriesLeft = request.target.service === undefined ? 0 : request.target.pool.retries;
  }

  /** Sends the first attempt: to the admin process, or to the target the route's pool picks. */
  start(): void {
    const { target } = this.#request;
    if (target.service === undefined) this.#send(undefined, target.origin, this.#request.path);
    else this.#sendTo(target.pool.pick(this.#balancing)!);
  }

  /**
   * Times a request with a body: while it arrives, an idle client socket for `timeoutMs` is a
   * stalled upload (408); once it has arrived whole, the target has `timeoutMs` to start its
   * response (504, as undici's headers timeout would give).
   */
  timeUpload(timeoutMs: number): void {
    const req = this.#req;
    req.setTimeout(timeoutMs, () => this.#uploadStalled());
    req.once('end', () => {
      req.setTimeout(0);
      if (this.#answered) return;
      this.#responseTimer = setTimeout(() => {
        if (!this.#answered) this.#attempt?.abort(new errors.HeadersTimeoutError());
      }, timeoutMs);
    });
  }

  /** Whether `attempt`'s events still count. */
  isCurrent(attempt: UpstreamAttempt): boolean {
    return attempt === this.#attempt;
  }

  /** The attempt is about to write its request: a client that left meanwhile stops it there. */
  attemptStarted(attempt: UpstreamAttempt): void {
    if (this.#clientGone) attempt.abort(new ClientClosedError());
  }

  /**
   * The answering attempt's response head: relayed (mapped, with the sticky cookie when the pool
   * balances by cookie), unless it is a 502/503/504 that another target may still answer.
   */
  responseStart(attempt: UpstreamAttempt, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage: string | undefined): void {
    if (statusCode < 200) return; // 1xx interim responses are not relayed
    if (this.#res.destroyed) {
      this.#answer();
      attempt.abort(new ClientClosedError());
      return;
    }
    const target = attempt.target;
    if (target !== undefined && isGatewayFailure(statusCode)) {
      target.health.failed(`status ${statusCode}`, () => (this.#request.target as Route).pool.mayEject(target));
      if (this.#retry(attempt, 'sent')) return;
    }
    this.#answer();
    this.#answeredBy(target);
    const mapped = this.#responseHeaders(headers, target);
    const sticky = this.#request.extras?.sticky;
    if (sticky !== undefined && target !== undefined && this.#rebinds(target)) {
      mapped.push('set-cookie', stickyCookie(sticky.name, target.stickyId, target.prefix, sticky.secure));
    }
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
  upgrade(attempt: UpstreamAttempt, statusCode: number, headers: Record<string, string | string[] | undefined>, upstream: Duplex): void {
    this.#answer();
    const client = this.#res.socket;
    if (this.#clientGone || client === null || client.destroyed) {
      upstream.destroy();
      return;
    }
    this.#answeredBy(attempt.target);
    const mapped = this.#responseHeaders(headers, attempt.target);
    mapped.push('connection', 'Upgrade', 'upgrade', headers.upgrade ?? 'websocket');
    this.#res.writeHead(statusCode, mapped);
    this.#res.end();
    tunnel(client, upstream);
  }

  /** A chunk of the answering response; false when the client's socket is full (pause). */
  write(chunk: Buffer): boolean {
    return this.#res.write(chunk);
  }

  /**
   * The target's response is complete: its trailer fields (RFC 9110 §6.5) go to the client at the
   * end of the chunked body Node writes, when it writes one (see trailers.ts).
   */
  end(trailers: IncomingHttpHeaders): void {
    const relayed = this.#res.chunkedEncoding ? relayableTrailers(trailers) : undefined;
    if (relayed !== undefined) this.#res.addTrailers(relayed);
    this.#res.end();
  }

  /**
   * The attempt failed (a client that left is not the target's failure): told to outlier
   * detection, then retried on another target when the policy allows, else counted, logged and
   * answered.
   */
  failed(attempt: UpstreamAttempt, error: Error): void {
    if (this.#clientGone || this.#res.destroyed) {
      this.#answer();
      return;
    }
    const kind = failureKind(error);
    const target = attempt.target;
    target?.health.failed(errorCode(error) ?? kind, () => (this.#request.target as Route).pool.mayEject(target));
    if (target !== undefined && target.stickyId === this.#balancing.stickyId) this.#stickyTargetLost = true;
    if (!this.#res.headersSent && kind !== 'timeout' && this.#retry(attempt, attempt.started ? 'sent' : 'not-sent')) return;
    this.#answer();
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
    this.#attempt?.abort(new ClientClosedError());
  }

  clientDrained(): void {
    this.#attempt?.resume();
  }

  /** The client stopped sending its body: give up on the target, answer 408 and close. */
  #uploadStalled(): void {
    if (this.#answered || this.#res.destroyed) return;
    this.#answered = true;
    this.#clientGone = true; // what undici reports for the aborted request is not the client's answer
    this.#attempt?.abort(new ClientClosedError());
    if (this.#res.headersSent) this.#res.destroy();
    else sendError(this.#res, new GatewayError('REQUEST_TIMEOUT', { headers: { connection: 'close' } }));
  }

  /** The access-log record names the target whose response head the client gets. */
  #answeredBy(target: RouteTarget | undefined): void {
    const record = this.#request.extras?.record;
    if (record !== undefined && target !== undefined) record.target = target.url;
  }

  /** The response has started or failed: stop timing. */
  #answer(): void {
    this.#answered = true;
    clearTimeout(this.#responseTimer);
  }

  /**
   * Sends the request to another target of the pool when retry-policy.ts allows it after
   * `attempt` failed (`sent`: the request had reached the target), within UPSTREAM_TIMEOUT, each
   * target once. True when it did.
   */
  #retry(attempt: UpstreamAttempt, reached: 'sent' | 'not-sent'): boolean {
    const route = this.#request.target;
    if (route.service === undefined || attempt.target === undefined || this.#answered) return false;
    const { mode } = this.#request;
    const budget = reached === 'sent' ? this.#retriesLeft : Infinity;
    if (budget <= 0 || !mayRetry(reached, this.#req, mode)) return false;
    const remainingMs = this.#forwarder.options.headersTimeoutMs - (Date.now() - this.#startedAt);
    if (remainingMs <= 0) return false;
    (this.#tried ??= []).push(attempt.target);
    const next = route.pool.pick(this.#balancing, this.#tried);
    if (next === undefined) return false;
    if (reached === 'sent') this.#retriesLeft--;
    this.#attempt = undefined; // first, so that what the abort reports is dropped
    attempt.abort(new RetriedError());
    this.#forwarder.options.logger.debug({ serviceId: route.service.id, target: next.url }, 'retrying on another target');
    this.#sendTo(next, remainingMs);
    return true;
  }

  /**
   * Whether the sticky cookie should name `target`, which answers: when the client's cookie names
   * no target of the pool, one out of rotation, or one that failed this request without an answer
   * (refused, reset: most likely gone, and outlier detection has not caught up yet). A target that
   * answered 502/503/504 once, the request retried elsewhere, keeps its client.
   */
  #rebinds(target: RouteTarget): boolean {
    const { stickyId } = this.#balancing;
    if (target.stickyId === stickyId) return false;
    if (this.#stickyTargetLost) return true;
    const named = (this.#request.target as Route).pool.targets.find((each) => each.stickyId === stickyId);
    return named === undefined || !named.health.available;
  }

  get #balancing(): BalancingInput {
    return this.#request.extras?.balancing ?? NO_BALANCING_INPUT;
  }

  /** An attempt to `target`: at its base path, counted in its requests. */
  #sendTo(target: RouteTarget, headersTimeoutMs?: number): void {
    target.health.requests++;
    this.#send(target, target.origin, joinPath(target.basePath, this.#request.path), headersTimeoutMs);
  }

  #send(target: RouteTarget | undefined, origin: string, path: string, headersTimeoutMs?: number): void {
    const { mode, headers, extras } = this.#request;
    const withBody = mode === 'body';
    const attempt = new UpstreamAttempt(this, target);
    this.#attempt = attempt;
    const options: Dispatcher.DispatchOptions = {
      path,
      method: this.#req.method as Dispatcher.HttpMethod,
      headers,
      body: withBody ? this.#req : null,
      upgrade: mode === 'websocket' ? 'websocket' : null,
      // 0: off, the exchange times the response itself (timeUpload); a retry gets what is left
      headersTimeout: withBody ? 0 : (headersTimeoutMs ?? null),
    };
    this.#forwarder.dispatch(origin, options, attempt, withBody ? extras?.trailerNames : undefined);
  }

  /** The target's response head as the client gets it: a service's mapped, the admin process's as it is. */
  #responseHeaders(headers: Record<string, string | string[] | undefined>, target: RouteTarget | undefined): (string | string[])[] {
    return target === undefined ? mapResponseHeaders(headers) : mapResponseHeaders(headers, target);
  }

  /**
   * Counts and logs a failure the client gets: a service's under its id; the admin process's only
   * logged, at error (every sign-in and console request depends on it), since it is no service's.
   */
  #report(kind: UpstreamFailureKind, code: string | undefined): void {
    const { service } = this.#request.target;
    const { logger, failures } = this.#forwarder.options;
    if (service === undefined) {
      logger.error({ kind, code }, 'admin process request failed');
      return;
    }
    failures?.upstreamError(service.id, kind);
    logger.warn({ serviceId: service.id, code }, 'upstream request failed');
  }
}

/**
 * One dispatch of a request to one target: undici's handler, handing each event to its exchange
 * while it is the exchange's current attempt; an aborted earlier attempt's late events are
 * dropped. Keeps the target's in-flight count (least_requests) until it settles.
 */
class UpstreamAttempt implements Dispatcher.DispatchHandler {
  readonly #exchange: UpstreamExchange;
  /** The pool's target; undefined for the admin process. */
  readonly target: RouteTarget | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  /** Whether undici began to write the request (its `onRequestStart`, right before the write). */
  started = false;
  #settled = false;

  constructor(exchange: UpstreamExchange, target: RouteTarget | undefined) {
    this.#exchange = exchange;
    this.target = target;
    if (target !== undefined) target.health.active++;
  }

  abort(reason: Error): void {
    this.#controller?.abort(reason);
    this.#settle();
  }

  resume(): void {
    this.#controller?.resume();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    this.started = true;
    if (this.#exchange.isCurrent(this)) this.#exchange.attemptStarted(this);
    else controller.abort(new RetriedError());
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, statusMessage?: string): void {
    if (this.#exchange.isCurrent(this)) this.#exchange.responseStart(this, statusCode, headers, statusMessage);
    else controller.abort(new RetriedError());
  }

  onRequestUpgrade(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>, upstream: Duplex): void {
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.upgrade(this, statusCode, headers, upstream);
    else upstream.destroy();
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#exchange.isCurrent(this) && !this.#exchange.write(chunk)) controller.pause();
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.end(trailers);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#settle();
    if (this.#exchange.isCurrent(this)) this.#exchange.failed(this, error);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.target !== undefined) this.target.health.active--;
  }
}

/** The abort reason of an attempt given up for another target's. */
class RetriedError extends Error {
  readonly code = 'GATEHOUSE_RETRIED';
  constructor() {
    super('retried on another target');
    this.name = 'RetriedError';
  }
}
