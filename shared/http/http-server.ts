import { createServer, Server as HttpServer, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createSecureServer as createHttp2SecureServer, createServer as createHttp2Server, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { checkingRequestHead, MAX_HEADER_FIELDS } from './request-head.js';
import { acceptPriorKnowledge } from './h2c-prior-knowledge.js';
import { HTTP2_OPTIONS, HTTP2_SECURE_OPTIONS, openConnectionWindow, prematureResetGuard } from './http2-settings.js';
import type { ListenerTls } from '../tls/listener-tls.js';

/** How long a stopping server lets in-flight requests finish, in ms (README.md, "Stopping": up to 10 s). */
export const DRAIN_TIMEOUT_MS = 10_000;

/** How long an idle connection is kept, in ms: longer than common load balancers' idle timeout (60 s), so they never reuse one we are closing. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/**
 * A gateway listener: node:http or node:https, or, where HTTP/2 is on, node:http2's TLS server that
 * also answers HTTP/1.1 (`allowHTTP1`). Each emits 'request' (and 'checkContinue', 'upgrade' for
 * HTTP/1.1) with node:http's objects or the compatibility API's `Http2ServerRequest` and
 * `Http2ServerResponse`, which the pipeline reads alike (design.md §4.17).
 */
export type GatewayServer = Server | Http2GatewayServer;

/**
 * node:http2's TLS server with `allowHTTP1`, which serves its HTTP/1.1 connections as node:http
 * does, from the same properties and with `closeIdleConnections` (not `closeAllConnections`: see
 * {@link closeAllConnections}).
 */
export type Http2GatewayServer = Http2SecureServer & Pick<Server, 'timeout' | 'maxHeadersCount' | 'keepAliveTimeout' | 'headersTimeout' | 'requestTimeout' | 'closeIdleConnections'>;

/** node:http2's compatibility API's request listener. */
type Http2RequestListener = (req: Http2ServerRequest, res: Http2ServerResponse) => void;

/** Which protocols a gateway listener speaks besides HTTP/1.1. */
export interface GatewayServerOptions {
  /** The listener's TLS (shared/tls/): it speaks HTTPS. */
  tls?: ListenerTls | undefined;
  /**
   * HTTP/2 as well (design.md §4.17): over `tls`, offered by ALPN (`h2` before `http/1.1`,
   * RFC 9113 §3.2); without, HTTP/2 with prior knowledge (h2c, RFC 9113 §3.3) beside HTTP/1.1.
   */
  http2?: boolean | undefined;
}

/**
 * An HTTP server with gateway settings: keep-alive longer than common load balancers' idle timeout
 * (60 s) so they never reuse a socket we are closing; no overall request timeout, since proxied
 * bodies may stream for long (slow senders are still cut off by `headersTimeout`). Every request
 * passes the request-head checks (request-head.ts) before `listener`: more than `maxHeaderFields`
 * fields → 431, two `Host` fields → 400 (over HTTP/2 also `:authority` and `Host` disagreeing).
 * `maxHeadersCount` is one above the limit, so Node keeps enough fields to see a request go over
 * it, and no more.
 *
 * With `options.tls` it speaks HTTPS (node:https over the listener's certificate store, shared/tls/;
 * node:http2's TLS server with `options.http2`), and every answer, the gateway's own and proxied
 * ones, starts with `tls.hsts` as `Strict-Transport-Security` (RFC 6797 §7.1); a proxied target's
 * own field replaces it (design.md §4.14). HTTP/2's settings and bounds are http2-settings.ts's.
 */
export function createGatewayServer(listener: RequestListener, maxHeaderFields?: number, options?: GatewayServerOptions & { http2?: false }): Server;
export function createGatewayServer(listener: RequestListener, maxHeaderFields: number | undefined, options: GatewayServerOptions): GatewayServer;
export function createGatewayServer(listener: RequestListener, maxHeaderFields = MAX_HEADER_FIELDS, options: GatewayServerOptions = {}): GatewayServer {
  const { tls, http2 = false } = options;
  const drainState: DrainState = { draining: false, sockets: new Set(), sessions: new Set() };
  const checked = checkingRequestHead(listener, maxHeaderFields);
  const hsts = tls?.hsts;
  const handle: RequestListener = (req, res) => {
    if (hsts !== undefined) res.setHeader('strict-transport-security', hsts);
    if (drainState.draining && req.httpVersionMajor !== 2) closeAfter(res); // HTTP/2: the drain's GOAWAY says it
    checked(req, res);
  };
  const server = tls === undefined ? createPlainServer(handle, http2, drainState) : createSecureServer(handle, tls, http2, drainState);
  server.maxHeadersCount = maxHeaderFields + 1;
  // Per connection, not per request: what drain() needs to reach the responses in flight (over
  // TLS, the decrypted socket, which is the one Node's HTTP parser and responses use).
  server.on(tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
    drainState.sockets.add(socket);
    socket.once('close', () => drainState.sockets.delete(socket));
  });
  DRAIN_STATES.set(server, drainState);
  return server;
}

/** node:http's settings of {@link createGatewayServer}, as server properties (node:http2's TLS server reads them for its HTTP/1.1 connections). */
const HTTP1_SETTINGS = { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, headersTimeout: KEEP_ALIVE_TIMEOUT_MS + 1000, requestTimeout: 0 };

/** A plain HTTP/1.1 server; with `http2`, taking HTTP/2 with prior knowledge on the same port (h2c-prior-knowledge.ts). */
function createPlainServer(handle: RequestListener, http2: boolean, drainState: DrainState): Server {
  const server = createServer(HTTP1_SETTINGS, handle);
  if (http2) {
    const h2 = createHttp2Server(HTTP2_OPTIONS);
    h2.on('session', (session: Http2Session) => trackSession(session, drainState));
    acceptPriorKnowledge(server, h2);
  }
  return server;
}

/**
 * An HTTPS server over `tls`'s certificates, its default context following the store's: node:https,
 * or with `http2` node:http2's TLS server offering `h2` and `http/1.1` by ALPN.
 */
function createSecureServer(handle: RequestListener, tls: ListenerTls, http2: boolean, drainState: DrainState): GatewayServer {
  if (!http2) {
    const server = createHttpsServer({ ...HTTP1_SETTINGS, ...tls.serverOptions(['http/1.1']) }, handle);
    tls.attach(server);
    return server;
  }
  // The pipeline reads the compatibility API's request and response as node:http's: what it uses
  // exists on both (design.md §4.17).
  const server = createHttp2SecureServer({ ...HTTP2_SECURE_OPTIONS, ...tls.serverOptions(['h2', 'http/1.1']) }, handle as unknown as Http2RequestListener) as Http2GatewayServer;
  Object.assign(server, HTTP1_SETTINGS);
  server.on('session', (session: Http2Session) => trackSession(session, drainState));
  tls.attach(server);
  return server;
}

/**
 * Keeps `session` among `drainState`'s while it lives (a drain closes it gracefully: GOAWAY, its
 * streams finish, RFC 9113 §6.8), opens its connection window, guards it against rapid reset, and
 * closes it once it has been idle, no stream open, for the keep-alive timeout, as HTTP/1.1
 * connections are.
 */
function trackSession(session: Http2Session, drainState: DrainState): void {
  openConnectionWindow(session);
  if (drainState.draining) session.close();
  drainState.sessions.add(session);
  session.once('close', () => drainState.sessions.delete(session));
  let openStreams = 0;
  session.on('stream', prematureResetGuard(session));
  session.on('stream', (stream: ServerHttp2Stream) => {
    openStreams++;
    stream.once('close', () => openStreams--);
  });
  session.setTimeout(KEEP_ALIVE_TIMEOUT_MS, () => {
    if (openStreams === 0) session.close();
  });
}

/** A gateway server's drain: whether it began, and its open connections. */
interface DrainState {
  draining: boolean;
  sockets: Set<Socket>;
  /** Its HTTP/2 sessions. */
  sessions: Set<Http2Session>;
}

const DRAIN_STATES = new WeakMap<GatewayServer, DrainState>();

/** Makes `res` say `Connection: close` (RFC 9112 §9.6), so Node closes its connection once it is written. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

/**
 * Listens on `port` (0: any free one) at `host` (undefined: every address) and resolves with the
 * port bound.
 */
export function listen(server: GatewayServer, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Stops accepting, closes idle keep-alive sockets, and waits for active requests to finish, cutting
 * the remaining connections after {@link DRAIN_TIMEOUT_MS}. From the call on, every response of a
 * gateway server ({@link createGatewayServer}) not yet begun, those in flight included, says
 * `Connection: close`: a keep-alive client then opens its next request elsewhere (a load balancer
 * sends it to another proxy) instead of sending it on a connection about to close, and the server
 * closes as soon as its last response is written, not at the drain limit. HTTP/2 sessions get
 * GOAWAY (RFC 9113 §6.8): their open streams finish, new ones go elsewhere.
 */
export async function drain(server: GatewayServer): Promise<void> {
  if (!server.listening) return;
  const state = DRAIN_STATES.get(server);
  if (state) {
    state.draining = true;
    // Node keeps the response a connection is serving as `_httpMessage` (public since Node 0.x, undocumented).
    for (const socket of state.sockets) {
      const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (current) closeAfter(current);
    }
    for (const session of state.sessions) session.close();
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => closeAllConnections(server), DRAIN_TIMEOUT_MS).unref();
  await closed;
  clearTimeout(force);
}

/**
 * Cuts every connection of `server`: its HTTP/1.1 ones (node:http's `closeAllConnections`, which
 * node:http2's TLS server lacks though it tracks them alike for `allowHTTP1`) and its HTTP/2 sessions.
 */
export function closeAllConnections(server: GatewayServer): void {
  HttpServer.prototype.closeAllConnections.call(server);
  for (const session of DRAIN_STATES.get(server)?.sessions ?? []) session.destroy();
}
