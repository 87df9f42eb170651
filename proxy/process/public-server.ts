import { createGatewayServer, drain, type GatewayServer } from '../../shared/http/http-server.js';
import { checkingRequestHead } from '../../shared/http/request-head.js';
import type { ListenerTls } from '../../shared/tls/listener-tls.js';
import type { ProxyPlane } from '../pipeline/proxy-plane.js';
import { createUpgradeHandler, type UpgradeHandler } from '../pipeline/upgrade.js';

/**
 * The public listener: the proxy plane for requests (`Expect: 100-continue` ones too) and for
 * protocol upgrades (WebSocket; any other upgrade is served as a plain request, upgrade.ts), each
 * after the request-head checks (request-head.ts).
 */
export interface PublicServer {
  readonly server: GatewayServer;
  /** Its upgraded connections (WebSocket tunnels); `close()` closes them. */
  readonly upgrades: UpgradeHandler;
  /** Stops accepting, closes open tunnels, and waits for in-flight requests (up to 10 s). */
  close(): Promise<void>;
}

/**
 * Builds the public listener for `plane` (not yet listening): HTTPS over `tls`'s certificates
 * when given (README "TLS"), offering HTTP/2 by ALPN beside HTTP/1.1, else plain HTTP/1.1, with
 * `h2c` HTTP/2 with prior knowledge too (README "HTTP/2", design.md §4.17); the same pipeline
 * for every protocol. Upgrades (WebSocket) are HTTP/1.1's only: HTTP/2 has no `Upgrade`
 * (RFC 9113 §8.6), and extended CONNECT (RFC 8441) is not offered, so a WebSocket client opens an
 * HTTP/1.1 connection for it.
 */
export function createPublicServer(plane: ProxyPlane, tls?: ListenerTls, h2c = false): PublicServer {
  const server = createGatewayServer(plane.handle, undefined, { tls, http2: tls !== undefined || h2c });
  server.on('checkContinue', checkingRequestHead(plane.handleContinue)); // refused before `100 Continue`
  const upgrades = createUpgradeHandler(plane.handle, server);
  server.on('upgrade', upgrades.handle);
  return {
    server,
    upgrades,
    async close() {
      const drained = drain(server);
      upgrades.closeAll(); // server.close() waits for upgraded sockets, which drain cannot see
      await drained;
    },
  };
}
