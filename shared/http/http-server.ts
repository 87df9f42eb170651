import { createServer, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { checkingRequestHead, MAX_HEADER_FIELDS } from './request-head.js';
import type { ListenerTls } from '../tls/listener-tls.js';

/** How long a stopping server lets in-flight requests finish, in ms (README.md, "Stopping": up to 10 s). */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * An HTTP server with gateway settings: keep-alive longer than common load balancers' idle timeout
 * (60 s) so they never reuse a socket we are closing; no overall request timeout, since proxied
 * bodies may stream for long (slow senders are still cut off by `headersTimeout`). Every request
 * passes the request-head checks (request-head.ts) before `listener`: more than `maxHeaderFields`
 * fields → 431, two `Host` fields → 400. `maxHeadersCount` is one above the limit, so Node keeps
 * enough fields to see a request go over it, and no more.
 *
 * With `tls` it speaks HTTPS (node:https over the listener's certificate store, shared/tls/), and
 * every answer, the gateway's own and proxied ones, starts with `tls.hsts` as
 * `Strict-Transport-Security` (RFC 6797 §7.1); a proxied target's own field replaces it
 * (design.md §4.14).
 */
export function createGatewayServer(listener: RequestListener, maxHeaderFields = MAX_HEADER_FIELDS, tls?: ListenerTls): Server {
  const options = { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 0 };
  const drainState: DrainState = { draining: false, sockets: new Set() };
  const checked = checkingRequestHead(listener, maxHeaderFields);
  const hsts = tls?.hsts;
  const handle: RequestListener = (req, res) => {
    if (hsts !== undefined) res.setHeader('strict-transport-security', hsts);
    if (drainState.draining) closeAfter(res);
    checked(req, res);
  };
  const server = tls === undefined ? createServer(options, handle) : createSecureServer(options, handle, tls);
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

/** An HTTPS server over `tls`'s certificates, its default context following the store's. */
function createSecureServer(options: ServerOptions, handle: RequestListener, tls: ListenerTls): Server {
  const server = createHttpsServer({ ...options, ...tls.serverOptions }, handle);
  tls.attach(server);
  return server;
}

/** A gateway server's drain: whether it began, and its open connections. */
interface DrainState {
  draining: boolean;
  sockets: Set<Socket>;
}

const DRAIN_STATES = new WeakMap<Server, DrainState>();

/** Makes `res` say `Connection: close` (RFC 9112 §9.6), so Node closes its connection once it is written. */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('connection', 'close');
}

/**
 * Listens on `port` (0: any free one) at `host` (undefined: every address) and resolves with the
 * port bound.
 */
export function listen(server: Server, port: number, host?: string): Promise<number> {
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
 * closes as soon as its last response is written, not at the drain limit.
 */
export async function drain(server: Server): Promise<void> {
  if (!server.listening) return;
  const state = DRAIN_STATES.get(server);
  if (state) {
    state.draining = true;
    // Node keeps the response a connection is serving as `_httpMessage` (public since Node 0.x, undocumented).
    for (const socket of state.sockets) {
      const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (current) closeAfter(current);
    }
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
  await closed;
  clearTimeout(force);
}
