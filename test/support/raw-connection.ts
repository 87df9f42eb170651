/**
 * A raw HTTP/1.1 client connection over TCP for exchanges no HTTP client library sends or shows as
 * they are: several requests on one socket (keep-alive, pipelining), requests with upgrade fields
 * or trailer sections, and responses read with their trailer section.
 */
import { EventEmitter, once } from 'node:events';
import net from 'node:net';

/** A response head as received. */
export interface RawHead {
  /** `HTTP/1.1 200 OK` */
  statusLine: string;
  status: number;
  /** `[lowercased name, value]` pairs in order. */
  headers: string[][];
}

/** One whole response read from a {@link RawConnection}. */
export interface RawExchange extends RawHead {
  /** The body with any chunked framing removed, as latin1 text. */
  body: string;
  /** The trailer section of a chunked body (RFC 9112 §7.1.2), `[lowercased name, value]` pairs. */
  trailers: string[][];
}

export interface RawConnection {
  /** Writes `text` (latin1) as it is. */
  write(text: string): void;
  /**
   * Resolves with the next whole response, interim 1xx ones skipped unless `interim` is true (a
   * 101's head is always returned: what follows it is another protocol); rejects if the connection
   * closes first.
   */
  next(options?: { interim?: boolean }): Promise<RawExchange>;
  /** True once the gateway closed the connection. */
  readonly closed: boolean;
  close(): void;
}

/** Parses a response head (the text before its blank line). */
export function parseHead(head: string): RawHead {
  const [statusLine = '', ...lines] = head.split('\r\n');
  return { statusLine, status: Number(statusLine.split(' ')[1]), headers: lines.map(field) };
}

/** Connects to 127.0.0.1:`port`. */
export async function openRawConnection(port: number): Promise<RawConnection> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.setEncoding('latin1');
  const changed = new EventEmitter();
  let received = '';
  let closed = false;
  socket.on('data', (chunk: string) => {
    received += chunk;
    changed.emit('change');
  });
  socket.on('close', () => {
    closed = true;
    changed.emit('change');
  });
  socket.on('error', () => {}); // seen as 'close'
  return {
    write: (text) => void socket.write(text, 'latin1'),
    async next({ interim = false } = {}) {
      for (;;) {
        const parsed = parseResponse(received, closed);
        if (parsed !== undefined) {
          received = received.slice(parsed.length);
          if (interim || parsed.response.status >= 200 || parsed.response.status === 101) return parsed.response;
          continue;
        }
        if (closed) throw new Error(`connection closed before a whole response: ${JSON.stringify(received)}`);
        await once(changed, 'change');
      }
    },
    get closed() {
      return closed;
    },
    close: () => socket.destroy(),
  };
}

/** The first whole response in `text` and how many characters it took, or undefined while incomplete. */
function parseResponse(text: string, closed: boolean): { response: RawExchange; length: number } | undefined {
  const blank = text.indexOf('\r\n\r\n');
  if (blank === -1) return undefined;
  const head = parseHead(text.slice(0, blank));
  const start = blank + 4;
  const value = (name: string) => head.headers.find(([key]) => key === name)?.[1];
  if (head.status < 200 || head.status === 204 || head.status === 304) {
    return { response: { ...head, body: '', trailers: [] }, length: start };
  }
  if (/chunked/i.test(value('transfer-encoding') ?? '')) return parseChunked(text, start, head);
  const length = value('content-length');
  if (length !== undefined) {
    const end = start + Number(length);
    return text.length < end ? undefined : { response: { ...head, body: text.slice(start, end), trailers: [] }, length: end };
  }
  return closed ? { response: { ...head, body: text.slice(start), trailers: [] }, length: text.length } : undefined;
}

/** A chunked body (RFC 9112 §7.1) from `at`, with its trailer section. */
function parseChunked(text: string, at: number, head: RawHead): { response: RawExchange; length: number } | undefined {
  let body = '';
  for (;;) {
    const eol = text.indexOf('\r\n', at);
    if (eol === -1) return undefined;
    const size = parseInt(text.slice(at, eol), 16);
    at = eol + 2;
    if (size === 0) break;
    if (text.length < at + size + 2) return undefined;
    body += text.slice(at, at + size);
    at += size + 2;
  }
  const end = text.indexOf('\r\n\r\n', at - 2);
  if (end === -1) return undefined;
  const section = text.slice(at, end);
  const trailers = section === '' ? [] : section.split('\r\n').map(field);
  return { response: { ...head, body, trailers }, length: end + 4 };
}

function field(line: string): string[] {
  const colon = line.indexOf(':');
  return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
}

/** A raw HTTP/1.1 exchange over TCP, for requests undici will not send; returns the whole reply. */
export async function rawRequest(port: number, text: string): Promise<RawResponse> {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(text); // not end(): a half-closed client counts as gone for node:http
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  const reply = Buffer.concat(chunks).toString('latin1');
  const blank = reply.indexOf('\r\n\r\n');
  const head = blank === -1 ? reply : reply.slice(0, blank);
  return { ...parseHead(head), body: blank === -1 ? '' : reply.slice(blank + 4) };
}

/** `GET target` sent byte for byte (fetch clients would normalise `\` and `#`), with `cookie` as its Cookie when given. */
export function rawGet(port: number, target: string, cookie?: string): Promise<RawResponse> {
  const session = cookie === undefined ? '' : `Cookie: ${cookie}\r\n`;
  return rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: gatehouse.test\r\n${session}Connection: close\r\n\r\n`);
}

/** `count` raw header lines with distinct names (`X-Pad-0: 0`, …), so no stack folds them into fewer fields. */
export function headerPadding(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `X-Pad-${i}: ${i}`);
}

/** A response read until the connection closed: its head, then everything after it as it came. */
export interface RawResponse extends RawHead {
  body: string;
}
