import { STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { errors, type Dispatcher } from 'undici';
import { errorCode } from '../../shared/error-code.js';
import { GatewayError } from '../../shared/errors.js';
import { sendError } from '../../shared/http/http-response.js';
import { isGatewayFailure, type AttemptFailure } from '../pool/retry-policy.js';
import type { AttemptPlan, Destination, ForwardMode, ResponseFields } from './attempt-plan.js';
import { ClientClosedError, RetriedError, UpstreamAttempt, type AttemptOwner } from './upstream-attempt.js';
import type { UpstreamConnections } from './upstream-connections.js';
import { carriesTrailers, relayableTrailers, trailerToAnnounce } from './trailers.js';
import { tunnel } from './tunnel.js';
import { grpcTimeoutMs, isGrpcCall } from './grpc-call.js';
import { respondTrailersOnly } from '../../shared/http/grpc-failure.js';
import { fieldObject } from '../headers/field-list.js';
import { failureKind, upstreamError } from './upstream-errors.js';
import type { Attributes } from '@opentelemetry/api';
import type { RequestTrace } from '../../shared/tracing/request-trace.js';
import { SpanKind } from '../../shared/tracing/span-export.js';
import { REQUEST_ID_FIELD, requestIdOf } from '../../shared/http/request-id.js';
import { closingFields } from '../../shared/http/connection-close.js';
import { isClientGone, wasReset } from '../../shared/http/response-state.js';

/**
 * A reason phrase relayed as the target sent it: HTAB, SP and visible ASCII. RFC 9112 §4 also
 * allows obs-text, but undici hands it over decoded as UTF-8, which Node either refuses to write
 * (a character above U+00FF: the client would never get an answer) or writes as other bytes.
 */
const RELAYABLE_REASON = /^[\t\x20-\x7e]+$/;

/** What an exchange sends besides the client's request itself. */
export interface ExchangeRequest {
  /** The request's fields as forwarded: a flat `[name, value, …]` list (request-headers.ts). */
  readonly headers: string[];
  readonly mode: ForwardMode;
  /**
   * A chunked body's announced trailer fields that may go along (`RequestHeaderBuilder.trailerNames`):
   * the request is then sent through trailer-dispatch.ts, since undici cannot send a trailer section.
   */
  readonly trailerNames: string[] | undefined;
  /** The request's trace while sampled: each attempt is a client span, named in its `traceparent` (design.md §3.10). */
  readonly trace?: RequestTrace | undefined;
  /** The attempts' span name; undefined: the method (a target's request, as the conventions name a client span). */
  readonly spanName?: string;
}

/**
 * Step 7 of the data plane (design.md §3.6): forwards `req` over `connections` to where `plan`
 * says, and streams the answering attempt's response into `res` without buffering either body.
 * `request.mode` says what follows the head: nothing, `req` streamed as the body, or a WebSocket
 * upgrade (then a 101 joins the client's socket to the target's). The response, or the
 * 502/503/504 for a failure (design.md §3.8), is written to `res`; if the client goes away first,
 * the upstream request is aborted.
 *
 * With a body, the wait for the response starts when the client's body has arrived whole (its
 * `end`), not at dispatch: undici's own headers timeout would count the upload too and cut any
 * upload slower than UPSTREAM_TIMEOUT. Until then the client's socket may not sit idle longer
 * than UPSTREAM_TIMEOUT (408, connection closed, upstream request aborted).
 */
export function exchange<D extends Destination>(req: IncomingMessage, res: ServerResponse, plan: AttemptPlan<D>, request: ExchangeRequest, connections: UpstreamConnections): void {
  const exchange = new UpstreamExchange(req, res, plan, request, connections);
  (res as ExchangeCarrier)[kExchange] = exchange;
  res.on('close', onClientClose);
  res.on('drain', onClientDrain);
  if (request.mode === 'body') exchange.timeUpload();
  exchange.send(plan.first());
}

/** True when the target's reason phrase differs from Node's standard one and can be relayed as it is. */
function hasOwnReason(statusCode: number, statusMessage: string | undefined): statusMessage is string {
  return statusMessage !== undefined && statusMessage !== STATUS_CODES[statusCode] && RELAYABLE_REASON.test(statusMessage);
}

/** Where a response finds its exchange from inside an event listener, without a closure per request. */
const kExchange = Symbol('gatehouse.upstreamExchange');
type ExchangeCarrier = ServerResponse & { [kExchange]?: UpstreamExchange<Destination> };

function onClientClose(this: ServerResponse): void {
  (this as ExchangeCarrier)[kExchange]?.clientClosed();
}

function onClientDrain(this: ServerResponse): void {
  (this as ExchangeCarrier)[kExchange]?.clientDrained();
}

/**
 * One client request in flight, over one or more attempts ({@link UpstreamAttempt}): writes the
 * answering attempt's response straight into the client's, with its backpressure (pause on a full
 * socket, resume on `drain`), times the upload and the wait for a response, and after a failed
 * attempt asks its plan where the request goes next, if anywhere.
 */
export class UpstreamExchange<D extends Destination> implements AttemptOwner<D> {
  readonly #req: IncomingMessage;
  readonly #res: ServerResponse;
  readonly #plan: AttemptPlan<D>;
  readonly #request: ExchangeRequest;
  readonly #connections: UpstreamConnections;
  readonly #startedAt = Date.now();
  /** A gRPC call (grpc-call.ts): HTTP/2 to its target, no upload-idle cut, its deadline honoured. */
  readonly #grpc: boolean;
  /** UPSTREAM_TIMEOUT, or a gRPC call's `grpc-timeout` when shorter, in ms. */
  readonly #timeoutMs: number;
  /** The attempt whose answer counts; earlier ones are aborted and their events ignored. */
  #attempt: UpstreamAttempt<D> | undefined;
  #clientGone = false;
  /** Set once the response (or its failure) has begun: no timeout applies any more. */
  #answered = false;
  #responseTimer: NodeJS.Timeout | undefined;
  /** A gRPC target's trailers-only answer to an HTTP/2 client, held until its end ({@link end}). */
  #heldHead: { statusCode: number; fields: (string | string[])[] } | undefined;

  constructor(req: IncomingMessage, res: ServerResponse, plan: AttemptPlan<D>, request: ExchangeRequest, connections: UpstreamConnections) {
    this.#req = req;
    this.#res = res;
    this.#plan = plan;
    this.#request = request;
    this.#connections = connections;
    this.#grpc = isGrpcCall(req.headers['content-type']);
    const deadlineMs = this.#grpc ? grpcTimeoutMs(req.headers['grpc-timeout']) : undefined;
    this.#timeoutMs = Math.min(connections.headersTimeoutMs, deadlineMs ?? Infinity);
  }

  /**
   * Times a request with a body: while it arrives, an idle client socket for UPSTREAM_TIMEOUT is
   * a stalled upload (408); once it has arrived whole, the target has UPSTREAM_TIMEOUT (or a gRPC
   * call's shorter deadline) to start its response (504, as undici's headers timeout would give).
   * A gRPC call's request stream may rest as long as its deadline allows: no upload-idle cut.
   */
  timeUpload(): void {
    const req = this.#req;
    const timeoutMs = this.#timeoutMs;
    if (!this.#grpc) req.setTimeout(timeoutMs, () => this.#uploadStalled());
    req.once('end', () => {
      req.setTimeout(0);
      if (this.#answered) return;
      this.#responseTimer = setTimeout(() => {
        if (!this.#answered) this.#attempt?.abort(new errors.HeadersTimeoutError());
      }, timeoutMs);
    });
  }

  /** Sends an attempt to `destination`, waiting at most `headersTimeoutMs` for its head when given (a retry's remaining time). */
  send(destination: D, headersTimeoutMs?: number, retryOf?: AttemptFailure): void {
    const { mode, trailerNames, trace } = this.#request;
    const withBody = mode === 'body';
    const attempt = new UpstreamAttempt(this, destination);
    this.#attempt = attempt;
    let headers = this.#request.headers;
    attempt.span = trace?.span && trace.child(this.#request.spanName ?? this.#req.method ?? 'GET', SpanKind.CLIENT, clientSpanAttributes(this.#req.method, destination, retryOf));
    if (attempt.span !== undefined) headers = [...headers, 'traceparent', trace!.traceParent(attempt.span), ...(trace!.traceState ? ['tracestate', trace!.traceState] : [])];
    const options: Dispatcher.DispatchOptions = {
      path: destination.path,
      method: this.#req.method as Dispatcher.HttpMethod,
      headers,
      body: withBody ? this.#req : null,
      upgrade: mode === 'websocket' ? 'websocket' : null,
      // 0: off, the exchange times the response itself (timeUpload); a retry gets what is left
      headersTimeout: withBody ? 0 : (headersTimeoutMs ?? null),
    };
    this.#connections.dispatch(destination.origin, options, attempt, withBody ? trailerNames : undefined, this.#grpc);
  }

  /** Whether `attempt`'s events still count. */
  isCurrent(attempt: UpstreamAttempt<D>): boolean {
    return attempt === this.#attempt;
  }

  /** The attempt is about to write its request: a client that left meanwhile stops it there. */
  attemptStarted(attempt: UpstreamAttempt<D>): void {
    if (this.#clientGone) attempt.abort(new ClientClosedError());
  }

  /** The attempt is over, whether current or not: its plan is told. */
  attemptSettled(attempt: UpstreamAttempt<D>): void {
    this.#plan.settled(attempt.destination);
  }

  /**
   * The answering attempt's response head: relayed as the plan maps it, unless it is a
   * 502/503/504 that another destination may still answer.
   */
  responseStart(attempt: UpstreamAttempt<D>, statusCode: number, fields: ResponseFields, statusMessage: string | undefined): void {
    if (statusCode < 200) return; // 1xx interim responses are not relayed
    attempt.span?.setAttribute('http.response.status_code', statusCode);
    if (isClientGone(this.#res)) {
      this.#answer();
      attempt.abort(new ClientClosedError());
      return;
    }
    if (isGatewayFailure(statusCode)) {
      this.#plan.failed(attempt.destination, `status ${statusCode}`, true);
      if (this.#retry(attempt, 'sent')) return;
    }
    this.#answer();
    const mapped = this.#plan.responseFields(attempt.destination, fields);
    pushRequestId(this.#res, mapped);
    // The target answered before the client's body had all come (an early 413, 401, 429): undici
    // then drops the request stream, and the rest of the body would sit unread on a connection
    // that keeps nothing else moving. The connection ends after this response (RFC 9112 §9.6).
    if (!this.#req.complete && this.#req.httpVersionMajor !== 2) mapped.push('connection', 'close'); // over HTTP/2 the stream alone ends
    // A gRPC status in the head is a trailers-only answer (PROTOCOL-HTTP2.md "Responses"): to an
    // HTTP/2 client its one HEADERS frame must end the stream, so it waits for the target's end.
    if (this.#grpc && this.#req.httpVersionMajor === 2 && fields['grpc-status'] !== undefined) {
      this.#heldHead = { statusCode, fields: mapped };
      return;
    }
    const trailer = trailerToAnnounce(this.#res, statusCode, fields);
    if (trailer !== undefined) mapped.push('trailer', trailer);
    // A reason phrase of its own is relayed when it can be (HTTP/2 has none, RFC 9113 §8.3.2);
    // otherwise Node writes the standard one. A status Node cannot write (outside 100–999; over
    // HTTP/2 outside 200–599) throws, and undici then reports the error to onResponseError: 502.
    if (this.#req.httpVersionMajor !== 2 && hasOwnReason(statusCode, statusMessage)) this.#res.writeHead(statusCode, statusMessage, mapped);
    else this.#res.writeHead(statusCode, mapped);
  }

  /**
   * The target switched protocols (RFC 9110 §15.2.2): relay its 101 head, then join the sockets.
   * `Connection` and `Upgrade` are hop-by-hop, so they are set afresh after the mapping.
   */
  upgrade(attempt: UpstreamAttempt<D>, statusCode: number, fields: ResponseFields, upstream: Duplex): void {
    this.#answer();
    const client = this.#res.socket;
    if (this.#clientGone || client === null || client.destroyed) {
      upstream.destroy();
      return;
    }
    const mapped = this.#plan.responseFields(attempt.destination, fields);
    pushRequestId(this.#res, mapped);
    mapped.push('connection', 'Upgrade', 'upgrade', fields.upgrade ?? 'websocket');
    this.#res.writeHead(statusCode, mapped);
    this.#res.end();
    tunnel(client, upstream);
  }

  /** A chunk of the answering response; false when the client's socket is full (pause). */
  write(chunk: Buffer): boolean {
    if (this.#heldHead !== undefined) this.#releaseHead(); // a body after all: not trailers-only
    return this.#res.write(chunk);
  }

  /**
   * The target's response is complete: its trailer fields (RFC 9110 §6.5) go to the client at the
   * end of the chunked body Node writes, when it writes one, or in HTTP/2's trailing HEADERS (see trailers.ts).
   */
  end(trailers: IncomingHttpHeaders): void {
    const held = this.#heldHead;
    if (held !== undefined && respondTrailersOnly(this.#res, held.statusCode, fieldObject(held.fields))) return;
    const relayed = carriesTrailers(this.#req, this.#res) ? relayableTrailers(trailers) : undefined;
    if (relayed !== undefined) this.#res.addTrailers(relayed);
    this.#res.end();
  }

  /**
   * The attempt failed (a client that left is not the target's failure): told to the plan, then
   * sent elsewhere when the plan allows, else counted, logged and answered.
   */
  failed(attempt: UpstreamAttempt<D>, error: Error): void {
    if (this.#clientGone || isClientGone(this.#res)) {
      this.#answer();
      return;
    }
    const kind = failureKind(error);
    const code = errorCode(error);
    this.#plan.failed(attempt.destination, code ?? kind, false);
    const failure: AttemptFailure = kind === 'timeout' ? 'timeout' : attempt.started ? 'sent' : 'not-sent';
    if (!this.#res.headersSent && this.#retry(attempt, failure)) return;
    this.#answer();
    this.#plan.report(kind, code);
    // After the head was sent the status cannot change: cut the connection so the client sees
    // a truncated response rather than a complete-looking one.
    if (this.#res.headersSent) this.#res.destroy();
    else sendError(this.#res, upstreamError(kind));
  }

  /** The client's response closed: if it had not finished, the client left, so stop upstream. */
  clientClosed(): void {
    clearTimeout(this.#responseTimer);
    if (this.#res.writableFinished && !wasReset(this.#res)) return;
    this.#clientGone = true;
    this.#attempt?.abort(new ClientClosedError());
  }

  /** The client's socket took what was written: the answering attempt may go on reading. */
  clientDrained(): void {
    this.#attempt?.resume();
  }

  /** The client stopped sending its body: give up on the target, answer 408 and close. */
  #uploadStalled(): void {
    if (this.#answered || isClientGone(this.#res)) return;
    this.#answered = true;
    this.#clientGone = true; // what undici reports for the aborted request is not the client's answer
    this.#attempt?.abort(new ClientClosedError());
    if (this.#res.headersSent) this.#res.destroy();
    else sendError(this.#res, new GatewayError('REQUEST_TIMEOUT', { headers: { ...closingFields(this.#req) } }));
  }

  /** Writes the held head as any other (its trailers then follow the body). */
  #releaseHead(): void {
    const { statusCode, fields } = this.#heldHead!;
    this.#heldHead = undefined;
    this.#res.writeHead(statusCode, fields);
  }

  /** The response has started or failed: stop timing. */
  #answer(): void {
    this.#answered = true;
    clearTimeout(this.#responseTimer);
  }

  /**
   * Sends the request where the plan says after `attempt` failed as `failure`, within
   * UPSTREAM_TIMEOUT. True when it did.
   */
  #retry(attempt: UpstreamAttempt<D>, failure: AttemptFailure): boolean {
    if (this.#answered) return false;
    const remainingMs = this.#timeoutMs - (Date.now() - this.#startedAt);
    const next = this.#plan.next(attempt.destination, failure, remainingMs);
    if (next === undefined) return false;
    this.#attempt = undefined; // first, so that what the abort reports is dropped
    attempt.abort(new RetriedError());
    this.send(next, remainingMs, failure);
    return true;
  }
}

/**
 * An attempt's client span attributes (OpenTelemetry HTTP client semantic conventions): the target's
 * address and the URL without the query's values, and why it is a retry when it is one.
 */
function clientSpanAttributes(method: string | undefined, destination: Destination, retryOf: AttemptFailure | undefined): Attributes {
  const url = new URL(destination.origin);
  const query = destination.path.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': method ?? 'GET',
    'server.address': url.hostname,
    'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
    'url.full': destination.origin + (query === -1 ? destination.path : destination.path.slice(0, query)),
  };
  if (retryOf !== undefined) attributes['gatehouse.retry.reason'] = retryOf;
  return attributes;
}

/** The request's id (design.md §3.10) as a field of the client's response head; the target's own was dropped (response-headers.ts). */
function pushRequestId(res: ServerResponse, mapped: (string | string[])[]): void {
  const requestId = requestIdOf(res);
  if (requestId !== undefined) mapped.push(REQUEST_ID_FIELD, requestId);
}
