import { connect, constants, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type IncomingHttpStatusHeader, type OutgoingHttpHeaders } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import { errors, type Dispatcher } from 'undici';
import { dialledOrigin, isH2cOrigin } from './http2-targets.js';
import { fieldObject } from '../headers/field-list.js';
import { RelayedController } from './relayed-controller.js';

/**
 * Request fields HTTP/2 forbids (RFC 9113 §8.2.2): connection-specific ones; `TE` is sent as
 * `trailers` alone. `Host` becomes `:authority` (§8.3.1).
 */
const NOT_SENT: ReadonlySet<string> = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'host']);

/**
 * Sends requests to targets over HTTP/2 with node:http2 (design.md §4.13): to `h2c://` targets in
 * cleartext with prior knowledge (RFC 9113 §3.3), to `https://` ones by ALPN `h2` (§3.2), one
 * session per origin, made again once it closes or is told to go away. undici's HTTP/2 client
 * reports a response's end before its trailer section when both come in one frame, and a gRPC
 * call's status is in that section (PROTOCOL-HTTP2.md "Responses"); so these requests take
 * node:http2 and drive the same undici dispatch handler as every other (exchange.ts), which times,
 * relays and answers their failures alike. Each request says `TE: trailers` (RFC 9113 §8.2.2:
 * the gateway relays trailer fields).
 */
export class Http2Dispatcher {
  readonly #sessions = new Map<string, ClientHttp2Session>();
  readonly #connectTimeoutMs: number;
  readonly #headersTimeoutMs: number;

  /** `connectTimeoutMs`: longest TCP/TLS connect; `headersTimeoutMs`: default wait for a response head (UPSTREAM_TIMEOUT). */
  constructor(connectTimeoutMs: number, headersTimeoutMs: number) {
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#headersTimeoutMs = headersTimeoutMs;
  }

  /**
   * Sends one request to `origin` (`h2c://host:port` or `https://host:port`) as undici's
   * `dispatch` would, reporting to `handler`: `onRequestStart` once the session is connected (a
   * refused connect leaves the body unread, so the request may go elsewhere), then the response.
   */
  dispatch(origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const session = this.#session(origin);
    const headers = requestHeaders(options, isH2cOrigin(origin) ? 'http' : 'https');
    const body = options.body as IncomingMessage | null;
    const stream = session.request(headers, { endStream: body === null });
    const exchange = new Http2Exchange(stream, handler);
    const headersTimeoutMs = options.headersTimeout ?? this.#headersTimeoutMs;
    const start = (): void => {
      if (exchange.aborted) return;
      handler.onRequestStart?.(exchange, {});
      if (exchange.aborted) return;
      if (headersTimeoutMs > 0) exchange.timeHead(headersTimeoutMs);
      body?.pipe(stream);
    };
    if (session.connecting) session.once('connect', start);
    else queueMicrotask(start);
  }

  /** Closes the session of each origin not in `origins`; its streams in flight finish first. */
  retain(origins: ReadonlySet<string>): void {
    for (const [origin, session] of this.#sessions) {
      if (origins.has(origin)) continue;
      this.#sessions.delete(origin);
      session.close();
    }
  }

  /** Closes every session once its streams are done. */
  async close(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    this.#sessions.clear();
    await Promise.all(sessions.map((session) => new Promise<void>((resolve) => session.close(() => resolve()))));
  }

  #session(origin: string): ClientHttp2Session {
    const current = this.#sessions.get(origin);
    if (current !== undefined && !current.closed && !current.destroyed) return current;
    const session = connect(dialledOrigin(origin), { ALPNProtocols: ['h2'] });
    this.#sessions.set(origin, session);
    const forget = () => {
      if (this.#sessions.get(origin) === session) this.#sessions.delete(origin);
    };
    session.once('goaway', forget);
    session.once('close', forget);
    // A session's error reaches each of its streams too (their 'error'); the session only goes.
    session.on('error', forget);
    const timer = setTimeout(() => session.destroy(new errors.ConnectTimeoutError()), this.#connectTimeoutMs);
    session.once('connect', () => clearTimeout(timer));
    session.once('close', () => clearTimeout(timer));
    session.unref();
    return session;
  }
}

/** undici's dispatch options as an HTTP/2 request head: pseudo-header fields, then the fields HTTP/2 allows. */
function requestHeaders(options: Dispatcher.DispatchOptions, scheme: 'http' | 'https'): OutgoingHttpHeaders {
  const flat = options.headers as string[];
  const host = flat.findIndex((name, i) => i % 2 === 0 && name.toLowerCase() === 'host');
  return {
    ':method': options.method,
    ':path': options.path,
    ':scheme': scheme,
    ...(host >= 0 ? { ':authority': flat[host + 1] } : {}),
    ...fieldObject(flat, (name) => NOT_SENT.has(name)),
    te: 'trailers',
  };
}

/** A response head or trailer section in undici's parsed form: pseudo-header fields left out. */
function parsedFields(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const fields: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (name[0] !== ':' && value !== undefined) fields[name] = value as string | string[];
  }
  return fields;
}

/** One HTTP/2 stream seen through undici's dispatch controller. */
class Http2Exchange extends RelayedController {
  readonly #stream: ClientHttp2Stream;
  #trailers: Record<string, string | string[]> = {};
  #ended = false;
  #headTimer: NodeJS.Timeout | undefined;

  constructor(stream: ClientHttp2Stream, handler: Dispatcher.DispatchHandler) {
    super(handler);
    this.#stream = stream;
    stream.on('response', (headers) => this.#respond(headers));
    stream.on('data', (chunk: Buffer) => this.handler.onResponseData?.(this, chunk));
    stream.on('trailers', (trailers) => (this.#trailers = parsedFields(trailers)));
    stream.on('end', () => (this.#ended = true));
    stream.on('error', (error) => this.fail(error));
    // Settled at 'close', which follows both the end and the trailer section, whichever came
    // last; a stream the target reset (RST_STREAM) may close with neither an error nor an end.
    stream.on('close', () => (this.#ended ? this.finish(this.#trailers) : this.fail(new errors.SocketError(`stream closed (code ${stream.rstCode})`))));
  }

  /** No response head within `timeoutMs` fails as undici's headers timeout does (504). */
  timeHead(timeoutMs: number): void {
    this.#headTimer = setTimeout(() => this.abort(new errors.HeadersTimeoutError()), timeoutMs);
  }

  protected override fail(error: Error): void {
    clearTimeout(this.#headTimer);
    super.fail(error);
  }

  protected cancel(): void {
    this.#stream.close(constants.NGHTTP2_CANCEL);
  }

  protected pauseResponse(): void {
    this.#stream.pause();
  }

  protected resumeResponse(): void {
    this.#stream.resume();
  }

  #respond(headers: IncomingHttpHeaders & IncomingHttpStatusHeader): void {
    clearTimeout(this.#headTimer);
    if (this.settled) return;
    this.handler.onResponseStart?.(this, headers[':status'] ?? 0, parsedFields(headers), undefined);
    if (this.paused) this.#stream.pause();
  }
}
