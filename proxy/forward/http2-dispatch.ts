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

/** Most sessions (connections) to one origin; past it, requests share the least busy one. */
const MAX_SESSIONS_PER_ORIGIN = 8;
/** A target's stream limit when its SETTINGS leave it out (RFC 9113 §6.5.2: unlimited; at least 100 recommended). */
const DEFAULT_STREAM_LIMIT = 100;
/** Requests given to each session and not yet closed (a session is full at the target's SETTINGS_MAX_CONCURRENT_STREAMS). */
const openStreams = new WeakMap<ClientHttp2Session, number>();
/** Sessions that have the target's SETTINGS: only then does node:http2 keep to its stream limit. */
const settled = new WeakSet<ClientHttp2Session>();
/** Why a session failed, for the requests that were waiting on it. */
const failures = new WeakMap<ClientHttp2Session, Error>();

/**
 * How many requests `session` takes before another session is opened: the target's
 * SETTINGS_MAX_CONCURRENT_STREAMS once known; one until then, so that a burst of requests to a new
 * target spreads over connections rather than queueing on the first.
 */
function streamLimit(session: ClientHttp2Session): number {
  return settled.has(session) ? (session.remoteSettings.maxConcurrentStreams ?? DEFAULT_STREAM_LIMIT) : 1;
}

function release(session: ClientHttp2Session): void {
  openStreams.set(session, (openStreams.get(session) ?? 1) - 1);
}

/**
 * Sends requests to targets over HTTP/2 with node:http2 (design.md §4.13): to `h2c://` targets in
 * cleartext with prior knowledge (RFC 9113 §3.3), to `https://` ones by ALPN `h2` (§3.2). Each
 * origin has up to 8 sessions: a request takes the first with a free stream (under the target's
 * SETTINGS_MAX_CONCURRENT_STREAMS; one while a session has not had them), else a new session, else
 * the least busy one, where node:http2 queues it until a stream is free. A session that closes or is told to go away is left for new
 * ones. undici's HTTP/2 client
 * reports a response's end before its trailer section when both come in one frame, and a gRPC
 * call's status is in that section (PROTOCOL-HTTP2.md "Responses"); so these requests take
 * node:http2 and drive the same undici dispatch handler as every other (exchange.ts), which times,
 * relays and answers their failures alike. Each request says `TE: trailers` (RFC 9113 §8.2.2:
 * the gateway relays trailer fields).
 */
export class Http2Dispatcher {
  readonly #sessions = new Map<string, ClientHttp2Session[]>();
  readonly #connectTimeoutMs: number;
  readonly #headersTimeoutMs: number;

  /** `connectTimeoutMs`: longest TCP/TLS connect; `headersTimeoutMs`: default wait for a response head (UPSTREAM_TIMEOUT). */
  constructor(connectTimeoutMs: number, headersTimeoutMs: number) {
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#headersTimeoutMs = headersTimeoutMs;
  }

  /**
   * Sends one request to `origin` (`h2c://host:port` or `https://host:port`) as undici's
   * `dispatch` would, reporting to `handler`: `onRequestStart` once the session is connected and
   * has the target's SETTINGS (a refused connect leaves the body unread, so the request may go
   * elsewhere), then the response.
   */
  dispatch(origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const session = this.#session(origin);
    openStreams.set(session, (openStreams.get(session) ?? 0) + 1);
    if (settled.has(session)) return this.#send(session, origin, options, handler);
    // A stream opened before the target's SETTINGS may pass its stream limit and be refused
    // (RFC 9113 §5.1.2), which a request whose body went along could not recover from: wait.
    const onSettings = () => {
      session.off('close', onClose);
      this.#send(session, origin, options, handler);
    };
    const onClose = () => {
      session.off('remoteSettings', onSettings);
      release(session);
      new UnsentRequest(handler).refuse(failures.get(session) ?? new errors.SocketError('the connection to the target closed before it was ready'));
    };
    session.once('remoteSettings', onSettings);
    session.once('close', onClose);
  }

  #send(session: ClientHttp2Session, origin: string, options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): void {
    const headers = requestHeaders(options, isH2cOrigin(origin) ? 'http' : 'https');
    const body = options.body as IncomingMessage | null;
    const stream = session.request(headers, { endStream: body === null });
    stream.once('close', () => release(session));
    const exchange = new Http2Exchange(stream, handler);
    const headersTimeoutMs = options.headersTimeout ?? this.#headersTimeoutMs;
    const start = (): void => {
      if (exchange.aborted) return;
      handler.onRequestStart?.(exchange, {});
      if (exchange.aborted) return;
      if (headersTimeoutMs > 0) exchange.timeHead(headersTimeoutMs);
      body?.pipe(stream);
    };
    queueMicrotask(start);
  }

  /** Closes the sessions of each origin not in `origins`; their streams in flight finish first. */
  retain(origins: ReadonlySet<string>): void {
    for (const [origin, sessions] of this.#sessions) {
      if (origins.has(origin)) continue;
      this.#sessions.delete(origin);
      for (const session of sessions) session.close();
    }
  }

  /** Closes every session once its streams are done. */
  async close(): Promise<void> {
    const sessions = [...this.#sessions.values()].flat();
    this.#sessions.clear();
    await Promise.all(sessions.map((session) => new Promise<void>((resolve) => session.close(() => resolve()))));
  }

  /** A session of `origin` for one more request (see the class comment). */
  #session(origin: string): ClientHttp2Session {
    const sessions = this.#sessions.get(origin) ?? [];
    const free = sessions.find((session) => (openStreams.get(session) ?? 0) < streamLimit(session));
    if (free !== undefined) return free;
    if (sessions.length < MAX_SESSIONS_PER_ORIGIN) return this.#connect(origin, sessions);
    return sessions.reduce((least, session) => ((openStreams.get(session) ?? 0) < (openStreams.get(least) ?? 0) ? session : least));
  }

  /** A new session to `origin`, kept in `sessions` until it closes, fails or is told to go away. */
  #connect(origin: string, sessions: ClientHttp2Session[]): ClientHttp2Session {
    const session = connect(dialledOrigin(origin), { ALPNProtocols: ['h2'] });
    sessions.push(session);
    this.#sessions.set(origin, sessions);
    const forget = () => {
      const at = sessions.indexOf(session);
      if (at >= 0) sessions.splice(at, 1);
    };
    session.once('goaway', forget);
    session.once('close', forget);
    // A session's error reaches each of its streams too (their 'error'); the session only goes.
    session.on('error', (error) => {
      failures.set(session, error);
      forget();
    });
    session.once('remoteSettings', () => settled.add(session));
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

/** A request that never got a stream (its session failed first): told so, as never sent. */
class UnsentRequest extends RelayedController {
  refuse(error: Error): void {
    this.fail(error);
  }

  protected cancel(): void {}
  protected pauseResponse(): void {}
  protected resumeResponse(): void {}
}
