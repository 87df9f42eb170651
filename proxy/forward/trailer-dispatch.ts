import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { errors, type Dispatcher } from 'undici';
import { fieldObject } from '../headers/field-list.js';
import { RelayedController } from './relayed-controller.js';

/** What a request sent by {@link TrailerDispatcher} consists of. */
export interface TrailerRequest {
  /** The target's origin, `http(s)://host:port`. */
  origin: string;
  method: string;
  /** Target-side path and query. */
  path: string;
  /** The flat `[name, value, …]` list from request-headers.ts, without `Trailer`. */
  headers: string[];
  /** The client's request, streamed as the chunked body; its trailer section arrives at `end`. */
  body: IncomingMessage;
  /** The trailer fields to relay, lowercased (`RequestHeaderBuilder.trailerNames`). */
  trailerNames: string[];
}

/**
 * Sends the requests whose client announced trailer fields (RFC 9110 §6.6.2) with node:http:
 * undici, which sends every other request, always ends a chunked body with an empty trailer
 * section, while node:http's `addTrailers` writes one (RFC 9112 §7.1.2). It drives the same
 * undici dispatch handler (exchange.ts's exchange), so such a response is relayed, timed and its
 * failures answered and counted exactly as any other. Rare (digests, gRPC-web), so it keeps plain
 * keep-alive agents beside undici's pools; connections are capped per origin like those.
 */
export class TrailerDispatcher {
  readonly #http: HttpAgent;
  readonly #https: HttpsAgent;
  readonly #connectTimeoutMs: number;

  /** `connectionsPerOrigin`: most sockets to one origin; `connectTimeoutMs`: longest TCP/TLS connect. */
  constructor(connectionsPerOrigin: number, connectTimeoutMs: number) {
    this.#http = new HttpAgent({ keepAlive: true, maxSockets: connectionsPerOrigin });
    this.#https = new HttpsAgent({ keepAlive: true, maxSockets: connectionsPerOrigin });
    this.#connectTimeoutMs = connectTimeoutMs;
  }

  /** Sends `request` and reports its progress to `handler` as undici would. */
  dispatch(request: TrailerRequest, handler: Dispatcher.DispatchHandler): void {
    const url = new URL(request.origin);
    const secure = url.protocol === 'https:';
    const headers = fieldObject(request.headers);
    headers['transfer-encoding'] = 'chunked';
    headers.trailer = request.trailerNames.join(', ');
    const outgoing = (secure ? httpsRequest : httpRequest)({
      agent: secure ? this.#https : this.#http,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port,
      method: request.method,
      path: request.path,
      headers,
    });
    const exchange = new NodeExchange(outgoing, handler);
    exchange.timeConnect(this.#connectTimeoutMs);
    // As undici does: the handler hears of the start, and the body is read, only once a connection
    // is there (TLS: its handshake done), so a refused or failed connect leaves the body untouched
    // and the request may go to another target (retry-policy.ts).
    const start = (): void => {
      if (exchange.aborted) return;
      handler.onRequestStart?.(exchange, {});
      if (!exchange.aborted) sendBody(request.body, outgoing, request.trailerNames);
    };
    outgoing.once('socket', (socket) => {
      if (socket.connecting) socket.once(secure ? 'secureConnect' : 'connect', start);
      else start();
    });
  }

  /** Closes every kept-alive connection. */
  close(): void {
    this.#http.destroy();
    this.#https.destroy();
  }
}

/** Streams `body` into `outgoing` with backpressure, then its relayable trailer fields. */
function sendBody(body: IncomingMessage, outgoing: ClientRequest, names: string[]): void {
  body.pipe(outgoing, { end: false });
  body.once('end', () => {
    const trailers: OutgoingHttpHeaders = {};
    for (const name of names) {
      const value = body.trailers[name];
      if (value !== undefined) trailers[name] = value;
    }
    outgoing.addTrailers(trailers);
    outgoing.end();
  });
}

/** A response's raw header list in undici's parsed form: lowercased names, arrays for repeats. */
function parsedHeaders(raw: readonly string[]): IncomingHttpHeaders {
  return fieldObject(raw) as IncomingHttpHeaders;
}

/** One node:http request seen through undici's dispatch controller. */
class NodeExchange extends RelayedController {
  readonly #outgoing: ClientRequest;
  #response: IncomingMessage | undefined;

  constructor(outgoing: ClientRequest, handler: Dispatcher.DispatchHandler) {
    super(handler);
    this.#outgoing = outgoing;
    outgoing.on('response', (response) => this.#respond(response));
    outgoing.on('error', (error) => this.fail(error));
  }

  /** A connect longer than `timeoutMs` fails as undici's does (`UND_ERR_CONNECT_TIMEOUT`: 503). */
  timeConnect(timeoutMs: number): void {
    this.#outgoing.once('socket', (socket) => {
      if (!socket.connecting) return; // a kept-alive connection
      const timer = setTimeout(() => this.abort(new errors.ConnectTimeoutError()), timeoutMs);
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
  }

  protected cancel(): void {
    this.#outgoing.destroy();
  }

  protected pauseResponse(): void {
    this.#response?.pause();
  }

  protected resumeResponse(): void {
    this.#response?.resume();
  }

  #respond(response: IncomingMessage): void {
    if (this.settled) return;
    this.#response = response;
    response.on('data', (chunk: Buffer) => this.handler.onResponseData?.(this, chunk));
    response.on('end', () => this.finish(response.trailers));
    response.on('error', (error) => this.fail(error));
    this.handler.onResponseStart?.(this, response.statusCode ?? 0, parsedHeaders(response.rawHeaders), response.statusMessage);
    if (this.paused) response.pause();
  }
}
