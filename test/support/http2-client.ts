/**
 * Requests over one HTTP/2 session (node:http2's client), for tests of the gateway's HTTP/2: a
 * whole response with its trailers, and a body streamed from a generator.
 */
import { connect, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type SecureClientSessionOptions } from 'node:http2';
import { once } from 'node:events';
import type { Readable } from 'node:stream';

/** One HTTP/2 response: `:status` as `status`, the other fields, the body and the trailer fields. */
export interface Http2Response {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  trailers: IncomingHttpHeaders;
}

/** Opens a session to `origin` (`https://…` trusting `ca`, or `http://…`: prior knowledge) and waits until it is connected. */
export async function openSession(origin: string, options: SecureClientSessionOptions = {}): Promise<ClientHttp2Session> {
  const session = connect(origin, options);
  session.on('error', () => {}); // a test that expects the session to fail reads its 'close'
  await Promise.race([
    once(session, 'connect'),
    once(session, 'close').then(() => {
      throw new Error(`HTTP/2 session to ${origin} closed before it connected`);
    }),
  ]);
  return session;
}

/**
 * Sends `headers` (`:method` GET and `:path` `/` unless given) on `session` with `body` (a buffer,
 * or a stream piped in), and reads the whole response. Rejects when the stream is reset or fails.
 */
export function http2Request(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body?: Buffer | Readable): Promise<Http2Response> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'GET', ':path': '/', ...headers }, { endStream: body === undefined });
    const chunks: Buffer[] = [];
    let head: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders = {};
    stream.on('response', (fields) => (head = fields));
    stream.on('trailers', (fields) => (trailers = fields));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('error', reject);
    stream.on('close', () => {
      if (stream.rstCode !== 0 && stream.rstCode !== undefined) reject(new Error(`stream reset with code ${stream.rstCode}`));
      else resolve({ status: Number(head[':status']), headers: head, body: Buffer.concat(chunks), trailers });
    });
    if (Buffer.isBuffer(body)) stream.end(body);
    else body?.pipe(stream);
  });
}
