/**
 * A TLS client for tests of the gateway's HTTPS listeners: handshakes with a chosen SNI name (or
 * none) and protocol versions, the peer certificate's names, and HTTP/1.1 requests written by
 * hand on one socket, so that a test can tell a kept-alive connection from a new one.
 */
import { connect, type ConnectionOptions, type TLSSocket } from 'node:tls';

/** A handshake with 127.0.0.1:`port` trusting `ca`; `servername` undefined sends no SNI. Rejects with the handshake's error. */
export function handshake(port: number, ca: Buffer, servername: string | undefined, options: ConnectionOptions = {}): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    // Node sends no SNI for an IP address; `servername: ''` sends none either way.
    const socket = connect({ host: '127.0.0.1', port, ca, servername: servername ?? '', rejectUnauthorized: false, ...options }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The peer certificate's subjectAltName (`DNS:app.localhost, …`) and SHA-256 fingerprint. */
export function peerOf(socket: TLSSocket): { names: string; fingerprint: string } {
  const certificate = socket.getPeerCertificate();
  return { names: certificate.subjectaltname ?? '', fingerprint: certificate.fingerprint256 };
}

/** One response read off a socket. */
export interface SocketResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `GET <path>` with `Host: <host>` (and `fields`, `Name: value` lines) on `socket` (kept
 * alive) and reads the response (Content-Length or chunked).
 */
export function requestOn(socket: TLSSocket, host: string, path: string, fields: readonly string[] = []): Promise<SocketResponse> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const parsed = parseResponse(buffer);
      if (parsed === undefined) return;
      socket.off('data', onData).off('error', reject).off('close', onClose);
      resolve(parsed);
    };
    const onClose = () => reject(new Error(`connection closed before a response to ${path}`));
    socket.on('data', onData).once('error', reject).once('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAccept: application/json\r\n${fields.map((field) => `${field}\r\n`).join('')}\r\n`);
  });
}

/** A whole response in `buffer`, or undefined while it is incomplete. */
function parseResponse(buffer: Buffer): SocketResponse | undefined {
  const end = buffer.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buffer.subarray(0, end).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = buffer.subarray(end + 4);
  let body: Buffer | undefined;
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (rest.length >= length) body = rest.subarray(0, length);
  } else if (headers['transfer-encoding'] === 'chunked') {
    if (rest.includes('0\r\n\r\n')) body = rest;
  } else {
    body = rest;
  }
  return body === undefined ? undefined : { status: Number(statusLine!.split(' ')[1]), headers, body: body.toString('utf8') };
}
