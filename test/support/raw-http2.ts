/**
 * HTTP/2 frames written by hand on a socket (RFC 9113 §4, §6), for tests that send what no client
 * library will: requests without pseudo-header fields or with connection-specific ones, streams
 * reset as soon as opened, header blocks that never end, SETTINGS floods. Header blocks are HPACK
 * literals without indexing or Huffman coding (RFC 7541 §6.2.2), which every decoder takes.
 */
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

/** Frame types (RFC 9113 §6). */
export const FrameType = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;

/** Flags (RFC 9113 §6): END_STREAM on DATA and HEADERS, END_HEADERS on HEADERS and CONTINUATION, ACK on SETTINGS and PING. */
export const Flag = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;

/** Error codes (RFC 9113 §7). */
export const ErrorCode = { NO_ERROR: 0, PROTOCOL_ERROR: 1, REFUSED_STREAM: 7, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;

/** One frame as received. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** A frame's bytes: its 9-byte header (RFC 9113 §4.1) and `payload`. */
export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header.writeUInt8(type, 3);
  header.writeUInt8(flags, 4);
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with a 7-bit prefix (RFC 7541 §5.1). */
function hpackInteger(value: number): Buffer {
  if (value < 127) return Buffer.from([value]);
  const bytes = [127];
  let rest = value - 127;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** A header block of `fields` (`[name, value]`, names lowercase), each a literal without indexing. */
export function headerBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    const nameBytes = Buffer.from(name, 'latin1');
    const valueBytes = Buffer.from(value, 'latin1');
    parts.push(Buffer.from([0]), hpackInteger(nameBytes.length), nameBytes, hpackInteger(valueBytes.length), valueBytes);
  }
  return Buffer.concat(parts);
}

/** The pseudo-header fields of a GET of `path` at `authority`. */
export function getRequest(authority: string, path: string, scheme = 'http'): Array<[string, string]> {
  return [[':method', 'GET'], [':scheme', scheme], [':authority', authority], [':path', path]];
}

/**
 * A client connection speaking raw frames: the preface and an empty SETTINGS are sent at once,
 * the server's SETTINGS acknowledged; every frame received is kept in {@link frames}.
 */
export class RawHttp2Connection {
  readonly frames: Frame[] = [];
  readonly socket: Socket;
  /** Resolves when the connection is closed, by either side. */
  readonly closed: Promise<void>;
  #buffer: Buffer = Buffer.alloc(0);
  #waiters: Array<() => void> = [];

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('error', () => {}); // a reset by the server is what some tests expect
    socket.on('data', (chunk: Buffer) => this.#receive(chunk));
    this.closed = new Promise<void>((resolve) => socket.once('close', () => resolve(this.#wake())));
    socket.write(Buffer.concat([PREFACE, frame(FrameType.SETTINGS, 0, 0)]));
  }

  /**
   * Opens one to 127.0.0.1:`port` (cleartext with prior knowledge, or TLS offering only `h2` when
   * `ca` is given) and resolves once the server's SETTINGS came and were acknowledged: the
   * server's limits hold from then on (RFC 9113 §6.5.3).
   */
  static async open(port: number, ca?: Buffer): Promise<RawHttp2Connection> {
    const socket = ca === undefined ? connectTcp({ host: '127.0.0.1', port }) : connectTls({ host: '127.0.0.1', port, ca, servername: 'localhost', ALPNProtocols: ['h2'] });
    await once(socket, ca === undefined ? 'connect' : 'secureConnect');
    const connection = new RawHttp2Connection(socket);
    await connection.waitFor((f) => f.type === FrameType.SETTINGS && (f.flags & Flag.ACK) === 0);
    return connection;
  }

  /** Writes `bytes` (frames), unless the connection is already gone. */
  write(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Sends HEADERS on `streamId` with `fields` (END_HEADERS and END_STREAM unless told otherwise). */
  headers(streamId: number, fields: ReadonlyArray<readonly [string, string]>, flags: number = Flag.END_HEADERS | Flag.END_STREAM): void {
    this.write(frame(FrameType.HEADERS, flags, streamId, headerBlock(fields)));
  }

  /** Sends RST_STREAM on `streamId` with `code`. */
  reset(streamId: number, code: number = ErrorCode.CANCEL): void {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(code);
    this.write(frame(FrameType.RST_STREAM, 0, streamId, payload));
  }

  /** Resolves with the first frame received so far or later that `matches`, or undefined once the connection closed without one. */
  async waitFor(matches: (frame: Frame) => boolean): Promise<Frame | undefined> {
    for (;;) {
      const found = this.frames.find(matches);
      if (found !== undefined || this.socket.destroyed) return found;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** The RST_STREAM's error code on `streamId`, once it comes (undefined: the connection closed first). */
  async resetCode(streamId: number): Promise<number | undefined> {
    const reset = await this.waitFor((f) => f.type === FrameType.RST_STREAM && f.streamId === streamId);
    return reset?.payload.readUInt32BE(0);
  }

  /** Destroys the socket. */
  close(): void {
    this.socket.destroy();
  }

  #receive(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 9) {
      const length = this.#buffer.readUIntBE(0, 3);
      if (this.#buffer.length < 9 + length) break;
      const received: Frame = {
        type: this.#buffer.readUInt8(3),
        flags: this.#buffer.readUInt8(4),
        streamId: this.#buffer.readUInt32BE(5) & 0x7fffffff,
        payload: this.#buffer.subarray(9, 9 + length),
      };
      this.#buffer = this.#buffer.subarray(9 + length);
      if (received.type === FrameType.SETTINGS && (received.flags & Flag.ACK) === 0) this.write(frame(FrameType.SETTINGS, Flag.ACK, 0));
      this.frames.push(received);
    }
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}

/** The GOAWAY's error code among `frames`, or undefined when none came (RFC 9113 §6.8). */
export function goAwayCode(frames: readonly Frame[]): number | undefined {
  const goAway = frames.find((f) => f.type === FrameType.GOAWAY);
  return goAway?.payload.readUInt32BE(4);
}
