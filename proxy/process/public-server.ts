import type { Server } from 'node:http';
import { createGatewayServer, drain } from '../../shared/http/http-server.js';
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
  readonly server: Server;
  /** Its upgraded connections (WebSocket tunnels); `close()` closes them. */
  readonly upgrades: UpgradeHandler;
  /** Stops accepting, closes open tunnels, and waits for in-flight requests (up to 10 s). */
  close(): Promise<void>;
}

/**
 * Builds the public listener for `plane` (not yet listening): HTTPS over `tls`'s certificates
 * when given (README "TLS"), else plain HTTP; the same pipeline either way.
 */
export function createPublicServer(plane: ProxyPlane, tls?: ListenerTls): PublicServer {
  const server = createGatewayServer(plane.handle, undefined, tls);
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
