import type { Server } from 'node:http';
import type { Http2Server } from 'node:http2';
import type { Socket } from 'node:net';

/** The client connection preface of HTTP/2 (RFC 9113 §3.4), which a client with prior knowledge sends first. */
const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** How long a new connection may take to send enough bytes to tell HTTP/2 from HTTP/1.1, in ms (node:http's headers timeout). */
const SNIFF_TIMEOUT_MS = 66_000;

type ConnectionListener = (this: Server, socket: Socket) => void;

/**
 * Makes `server` (node:http, not yet listening) hand each connection that opens with the HTTP/2
 * preface to `h2` (node:http2's cleartext server: HTTP/2 with prior knowledge, RFC 9113 §3.3) and
 * every other to its own HTTP/1.1 handling, as before. Node's cleartext HTTP/2 server has no
 * `allowHTTP1`, and an HTTP/1.1 parser that has read the preface cannot give the connection back,
 * so the first bytes are read here (at most the preface's 24), put back with `unshift`, and the
 * connection is then given to one server or the other: node:http reads what was put back before
 * its own reads, and node:http2 takes a socket's buffered bytes as received (nodejs/node#35475).
 * `h2`'s requests are emitted as `server`'s ('request', 'checkContinue'), so one set of listeners
 * serves both protocols. A connection that sends too little for {@link SNIFF_TIMEOUT_MS} is closed.
 * @throws when `server` has no node:http connection listener to take over (a server made otherwise).
 */
export function acceptPriorKnowledge(server: Server, h2: Http2Server): void {
  const [http1] = server.listeners('connection') as ConnectionListener[];
  if (http1 === undefined) throw new Error('acceptPriorKnowledge: node:http\'s connection listener is missing');
  server.removeListener('connection', http1);
  server.prependListener('connection', (socket: Socket) => {
    sniffPreface(socket, (isHttp2) => (isHttp2 ? h2.emit('connection', socket) : http1.call(server, socket)));
  });
  h2.on('request', (req, res) => server.emit('request', req, res));
  h2.on('checkContinue', (req, res) => server.emit('checkContinue', req, res));
}

/**
 * Reads `socket` until its bytes either differ from the preface (HTTP/1.1) or hold all of it
 * (HTTP/2), puts them back, and calls `decided` with which it was.
 */
function sniffPreface(socket: Socket, decided: (isHttp2: boolean) => void): void {
  let seen: Buffer = Buffer.alloc(0);
  const onReadable = (): void => {
    for (let chunk: Buffer | null; (chunk = socket.read() as Buffer | null) !== null; ) seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
    const compared = Math.min(seen.length, PREFACE.length);
    const matches = seen.subarray(0, compared).equals(PREFACE.subarray(0, compared));
    if (matches && compared < PREFACE.length) return; // too few bytes yet to tell
    socket.off('readable', onReadable).off('error', onError);
    socket.setTimeout(0);
    if (seen.length > 0) socket.unshift(seen);
    decided(matches);
  };
  // Until a server has the socket, its errors (a reset) are this function's to take.
  const onError = (): void => void socket.destroy();
  socket.setTimeout(SNIFF_TIMEOUT_MS, () => socket.destroy());
  socket.on('readable', onReadable).on('error', onError);
}
