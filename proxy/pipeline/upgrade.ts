import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { Duplex } from 'node:stream';
import { sendError } from '../../shared/http/http-response.js';
import type { GatewayServer } from '../../shared/http/http-server.js';
import { requestHeadError } from '../../shared/http/request-head.js';
import type { ForwardMode } from '../forward/attempt-plan.js';
import { readInboundHeaders, type InboundHeaders } from '../headers/inbound-headers.js';

/** `Upgrade: websocket` (RFC 6455 §4.1: the token is case-insensitive). */
const WEBSOCKET = /(?:^|,)\s*websocket\s*(?:,|$)/i;

/** Fields left out of a request served without its upgrade: what asked for it (RFC 7540 §3.2.1). */
const UPGRADE_FIELDS: ReadonlySet<string> = new Set(['upgrade', 'http2-settings']);

/** The public port's handling of requests that ask to switch protocols (RFC 9110 §7.8). */
export interface UpgradeHandler {
  /** node:http 'upgrade' listener of `server`: `server.on('upgrade', upgrades.handle)`. */
  readonly handle: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /**
   * Destroys every connection handed over so far that is still open, tunnels included. Call it
   * when stopping: `server.close()` waits for these sockets, and `closeAllConnections()` does not
   * see them once Node has handed them over.
   */
  closeAll(): void;
}

/**
 * A WebSocket opening handshake (RFC 6455 §4.1): a `GET` without a body asking for `websocket`.
 * The only upgrade the gateway takes; `upgrade` is the request's `Upgrade` value.
 */
export function isWebSocketHandshake(method: string | undefined, upgrade: string | undefined, hasBody: boolean): boolean {
  return method === 'GET' && !hasBody && upgrade !== undefined && WEBSOCKET.test(upgrade);
}

/**
 * A WebSocket opening handshake (RFC 6455 §4.1) is switched only when it came through the
 * server's 'upgrade' event (Node then sets `req.upgrade`; see {@link createUpgradeHandler}), which hands the socket
 * over; any other request is forwarded as a plain one, its `Upgrade` dropped as hop-by-hop.
 */
export function forwardMode(req: IncomingMessage, inbound: InboundHeaders): ForwardMode {
  const upgrading = (req as IncomingMessage & { upgrade?: boolean }).upgrade === true;
  if (upgrading && isWebSocketHandshake(req.method, inbound.upgrade, inbound.hasBody)) return 'websocket';
  return inbound.hasBody ? 'body' : 'no-body';
}

/**
 * Handles the requests `server` (the public listener) emits as 'upgrade': Node does so for every
 * request with `Connection: upgrade` and `Upgrade`, and hands over the bare socket.
 *
 * A WebSocket handshake goes to `handle` (the data plane's `ProxyPlane.handle`), so it takes exactly the path of any request
 * (canonical path, gateway paths, route, rate limit, session, access log) and only the last step
 * differs: a 101 from the target joins the two sockets. The socket is wrapped in a ServerResponse
 * for one request, then closes unless it was upgraded.
 *
 * Any other upgrade (`h2c` from `curl --http2`, RFC 7540 §3.2; `Upgrade: foo`) is one a server may
 * ignore (RFC 9110 §7.8), and the gateway does: the request is served as a plain one, body and
 * keep-alive included (see {@link serveWithoutUpgrade}).
 *
 * The request-head checks of every listener apply first (request-head.ts: 431, or 400 for two
 * `Host` fields; the connection then closes).
 */
export function createUpgradeHandler(handle: (req: IncomingMessage, res: ServerResponse) => void, server: GatewayServer): UpgradeHandler {
  const open = new Set<Duplex>();
  const serve = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    const refused = requestHeadError(req);
    const inbound = readInboundHeaders(req.rawHeaders);
    if (refused === undefined && !isWebSocketHandshake(req.method, inbound.upgrade, inbound.hasBody)) {
      serveWithoutUpgrade(server, req, socket, head);
      return;
    }
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    if (head.length > 0) socket.unshift(head); // bytes after the head belong to the new protocol
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.on('finish', onFinish);
    if (refused === undefined) handle(req, res);
    else sendError(res, refused);
  };
  return {
    handle(req, socket, head) {
      socket.on('error', ignore); // failures surface as 'close', which every step already handles
      whenEarlierResponseDone(server, socket as Socket, () => serve(req, socket as Socket, head));
    },
    closeAll() {
      for (const socket of open) socket.destroy();
      open.clear();
    },
  };
}

/**
 * Runs `next` once no response to an earlier request is being written on `socket`. Node hands an
 * upgrade request over as soon as it has parsed its head, even when it was pipelined (RFC 9112
 * §9.3.2) behind a request still being answered; that response keeps the socket until it
 * finishes, and Node assigns a connection to one response at a time. If the earlier response
 * closes the connection (`Connection: close`), nothing follows it.
 */
function whenEarlierResponseDone(server: GatewayServer, socket: Socket, next: () => void): void {
  const earlier = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!earlier) {
    next();
    return;
  }
  earlier.once('finish', () => {
    if (!socket.writable) return;
    socket.setTimeout(server.timeout); // not the keep-alive timer the finished response set
    next();
  });
}

/**
 * Gives the connection back to `server` as if the request had come without its upgrade: its head
 * is written again without `Upgrade` and `HTTP2-Settings` (so Node's parser, which decides on
 * `Upgrade` with `Connection: upgrade`, reads it as a plain request), put back in front of the
 * bytes that followed it (its body, further pipelined requests), and the socket goes through the
 * server's connection handling anew (a node:http server's 'connection'; over TLS, node:https's or
 * node:http2's 'secureConnection', the latter reading the socket's ALPN `http/1.1`, as 'connection' there would begin a TLS handshake on the decrypted socket). Node then reads the body, answers, and keeps the connection
 * alive as for any request. `Connection` keeps its other options, which the forwarded request
 * drops as hop-by-hop.
 *
 * The head is rewritten from `req.rawHeaders` (Node refuses obs-fold, so no value spans lines) as
 * `name:value` lines, never longer than the client's own, so it passes the same size limit.
 */
function serveWithoutUpgrade(server: GatewayServer, req: IncomingMessage, socket: Socket, head: Buffer): void {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (!UPGRADE_FIELDS.has(raw[i]!.toLowerCase())) lines.push(`${raw[i]}:${raw[i + 1]}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit(server instanceof TlsServer ? 'secureConnection' : 'connection', socket);
}

/**
 * After a response that did not switch protocols, the connection is done. Nothing reads the
 * socket any more, so it is destroyed once flushed instead of waiting for the client's FIN.
 */
function onFinish(this: ServerResponse): void {
  if (this.statusCode !== 101) this.socket?.destroySoon();
}

function ignore(): void {}
