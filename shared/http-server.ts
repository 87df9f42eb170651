import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkingRequestHead, MAX_HEADER_FIELDS } from './request-head.js';

/** How long a stopping server lets in-flight requests finish, in ms (README.md, "Stopping": up to 10 s). */
export const DRAIN_TIMEOUT_MS = 10_000;

/**
 * An HTTP server with gateway settings: keep-alive longer than common load balancers' idle timeout
 * (60 s) so they never reuse a socket we are closing; no overall request timeout, since proxied
 * bodies may stream for long (slow senders are still cut off by `headersTimeout`). Every request
 * passes the request-head checks (request-head.ts) before `listener`: more than `maxHeaderFields`
 * fields → 431, two `Host` fields → 400. `maxHeadersCount` is one above the limit, so Node keeps
 * enough fields to see a request go over it, and no more.
 */
export function createGatewayServer(listener: RequestListener, maxHeaderFields = MAX_HEADER_FIELDS): Server {
  const options = { keepAliveTimeout: 65_000, headersTimeout: 66_000, requestTimeout: 0 };
  const server = createServer(options, checkingRequestHead(listener, maxHeaderFields));
  server.maxHeadersCount = maxHeaderFields + 1;
  return server;
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
 * the remaining connections after {@link DRAIN_TIMEOUT_MS}.
 */
export async function drain(server: Server): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), DRAIN_TIMEOUT_MS).unref();
  await closed;
  clearTimeout(force);
}
