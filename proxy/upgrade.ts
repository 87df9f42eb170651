import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { GatewayError } from '../shared/errors.js';
import { sendError } from '../shared/http-response.js';
import { requestHeadError } from '../shared/request-head.js';
import type { ProxyPlane } from './proxy-plane.js';

/** The public port's handling of requests that ask to switch protocols (RFC 9110 §7.8). */
export interface UpgradeHandler {
  /** node:http 'upgrade' listener: `server.on('upgrade', upgrades.handle)`. */
  readonly handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Destroys every connection handed over so far that is still open, tunnels included. Call it
   * when stopping: `server.close()` waits for these sockets, and `closeAllConnections()` does not
   * see them once Node has handed them over.
   */
  closeAll(): void;
}

/**
 * Hands every upgrade request to `plane.handle`, so a WebSocket handshake (RFC 6455 §4.1) takes
 * exactly the path of any request (canonical path, gateway paths, route, rate limit, session,
 * access log) and only the last step differs: a 101 from the target joins the two sockets.
 *
 * Node hands over the bare socket, so it is wrapped in a ServerResponse (one request, then the
 * socket closes unless it was upgraded). The request-head checks of every listener apply
 * (request-head.ts: 431, or 400 for two `Host` fields). A non-WebSocket upgrade (`h2c`) is served
 * as a plain request without switching; one that carries a body gets 400, because Node has
 * already detached the parser that would have read it.
 */
export function createUpgradeHandler(plane: ProxyPlane): UpgradeHandler {
  const open = new Set<Duplex>();
  return {
    handle(req, socket, head) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', ignore); // failures surface as 'close', which every step already handles
      if (head.length > 0) socket.unshift(head); // bytes after the head belong to the new protocol
      const res = new ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket as Socket);
      res.on('finish', onFinish);
      const refused = requestHeadError(req) ?? (hasBody(req) ? new GatewayError('BAD_REQUEST') : undefined);
      if (refused === undefined) plane.handle(req, res);
      else sendError(res, refused);
    },
    closeAll() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}

/**
 * After a response that did not switch protocols, the connection is done. Nothing reads the
 * socket any more, so it is destroyed once flushed instead of waiting for the client's FIN.
 */
function onFinish(this: ServerResponse): void {
  if (this.statusCode !== 101) this.socket?.destroySoon();
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
}

function ignore(): void {}
