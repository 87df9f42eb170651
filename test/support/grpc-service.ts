/**
 * A real gRPC target for the gateway's tests: `@grpc/grpc-js`'s server with a test service of every
 * call kind, and its client. Messages are JSON in the gRPC frames (a generic service definition, so
 * no .proto compiler is needed); what is asserted is the transport: streaming both ways, metadata,
 * status and trailers, deadlines. Not a test file.
 *
 * Service `gatehouse.test.Echo`:
 * - `Unary(EchoRequest) → EchoReply`: echoes `text`, with the request metadata the target received
 *   (`authorization`, `x-gatehouse-assertion`, `x-request-id`, `traceparent` present or not) and
 *   the value of metadata `x-echo` when sent;
 * - `Fail(FailRequest) → EchoReply`: fails with `code` and `message` (and trailer `x-detail: why`);
 * - `Slow(SlowRequest) → EchoReply`: answers after `delayMs`;
 * - `Count(CountRequest) → stream Chunk`: `count` messages of `size` bytes each (server streaming);
 * - `Sum(stream Chunk) → SumReply`: how many messages and bytes it read (client streaming);
 * - `Chat(stream EchoRequest) → stream EchoReply`: each message echoed as it comes (bidirectional).
 */
import * as grpc from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';

export interface EchoRequest {
  text: string;
}
export interface EchoReply {
  text: string;
  /** Request metadata keys the target saw, of those listed in the file comment. */
  seen: string[];
  /** The value of metadata `x-echo`, when the call carried it. */
  echo?: string;
}
export interface FailRequest {
  code: grpc.status;
  message: string;
}
export interface SlowRequest {
  delayMs: number;
}
export interface CountRequest {
  count: number;
  size: number;
}
export interface Chunk {
  data: string;
}
export interface SumReply {
  messages: number;
  bytes: number;
}

const SEEN_KEYS = ['authorization', 'x-gatehouse-assertion', 'x-request-id', 'traceparent', 'cookie'];

/** A message codec: JSON in a gRPC frame. */
const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as unknown,
};

function method(prefix: string, name: string, requestStream: boolean, responseStream: boolean): grpc.MethodDefinition<unknown, unknown> {
  return {
    path: `${prefix}/gatehouse.test.Echo/${name}`,
    requestStream,
    responseStream,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
    originalName: name,
  };
}

/**
 * The service's definition, for a server (no `prefix`) and for {@link EchoClient}: a client of
 * the service as a gateway serves it under a path prefix (`/rpc`) calls `/rpc/gatehouse.test.Echo/…`.
 */
function echoService(prefix = ''): grpc.ServiceDefinition {
  return {
    Unary: method(prefix, 'Unary', false, false),
    Fail: method(prefix, 'Fail', false, false),
    Slow: method(prefix, 'Slow', false, false),
    Count: method(prefix, 'Count', false, true),
    Sum: method(prefix, 'Sum', true, false),
    Chat: method(prefix, 'Chat', true, true),
  };
}

/** A client of the Echo service: its streaming methods as grpc-js makes them (unary ones through {@link unary}). */
export interface EchoClient extends grpc.Client {
  Count(request: CountRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<Chunk>;
  Sum(metadata: grpc.Metadata, callback: grpc.requestCallback<SumReply>): grpc.ClientWritableStream<Chunk>;
  Chat(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<EchoRequest, EchoReply>;
}

export interface GrpcTarget {
  /** `h2c://127.0.0.1:<port>` without TLS, `https://localhost:<port>` with it: a service's target url. */
  url: string;
  port: number;
  /** Calls the target has begun, by method name (`Unary`, `Count`, …). */
  calls: Map<string, number>;
  close(): Promise<void>;
}

/**
 * Starts the Echo service on 127.0.0.1 (a free port): cleartext HTTP/2 (h2c) by default, or TLS
 * with `tls` (PEM files of a certificate for `localhost`; ALPN h2, as gRPC requires).
 */
export async function startGrpcTarget(tls?: { cert: string; key: string }): Promise<GrpcTarget> {
  const server = new grpc.Server();
  const calls = new Map<string, number>();
  const count = (name: string) => calls.set(name, (calls.get(name) ?? 0) + 1);
  server.addService(echoService(), implementation(count));
  const credentials = tls ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: readFileSync(tls.cert), private_key: readFileSync(tls.key) }]) : grpc.ServerCredentials.createInsecure();
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', credentials, (error, bound) => (error ? reject(error) : resolve(bound))));
  return {
    url: tls ? `https://localhost:${port}` : `h2c://127.0.0.1:${port}`,
    port,
    calls,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()),
  };
}

function seen(metadata: grpc.Metadata): Pick<EchoReply, 'seen' | 'echo'> {
  const echo = metadata.get('x-echo')[0];
  return { seen: SEEN_KEYS.filter((key) => metadata.get(key).length > 0), ...(echo !== undefined ? { echo: String(echo) } : {}) };
}

function implementation(count: (name: string) => void): grpc.UntypedServiceImplementation {
  return {
    Unary(call: grpc.ServerUnaryCall<EchoRequest, EchoReply>, done: grpc.sendUnaryData<EchoReply>) {
      count('Unary');
      done(null, { text: call.request.text, ...seen(call.metadata) });
    },
    Fail(call: grpc.ServerUnaryCall<FailRequest, EchoReply>, done: grpc.sendUnaryData<EchoReply>) {
      count('Fail');
      const trailer = new grpc.Metadata();
      trailer.set('x-detail', 'why');
      done({ code: call.request.code, details: call.request.message, metadata: trailer });
    },
    Slow(call: grpc.ServerUnaryCall<SlowRequest, EchoReply>, done: grpc.sendUnaryData<EchoReply>) {
      count('Slow');
      const timer = setTimeout(() => done(null, { text: 'slow', seen: [] }), call.request.delayMs);
      call.on('cancelled', () => clearTimeout(timer));
    },
    Count(call: grpc.ServerWritableStream<CountRequest, Chunk>) {
      count('Count');
      void writeChunks(call, call.request.count, 'x'.repeat(call.request.size));
    },
    Sum(call: grpc.ServerReadableStream<Chunk, SumReply>, done: grpc.sendUnaryData<SumReply>) {
      count('Sum');
      let messages = 0;
      let bytes = 0;
      call.on('data', (chunk: Chunk) => {
        messages++;
        bytes += chunk.data.length;
      });
      call.on('end', () => done(null, { messages, bytes }));
    },
    Chat(call: grpc.ServerDuplexStream<EchoRequest, EchoReply>) {
      count('Chat');
      const meta = seen(call.metadata);
      call.on('data', (message: EchoRequest) => call.write({ text: message.text, ...meta }));
      call.on('end', () => call.end());
    },
  };
}

/** Writes `count` chunks of `data`, waiting for 'drain' when the stream says so (flow control end to end). */
async function writeChunks(call: grpc.ServerWritableStream<CountRequest, Chunk>, count: number, data: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    if (call.cancelled) return;
    if (!call.write({ data })) await new Promise((resolve) => call.once('drain', resolve));
  }
  call.end();
}

/**
 * A client of the Echo service at `address` (`host:port`), under `prefix` when given (a
 * gateway's service path): cleartext (prior-knowledge HTTP/2) without `ca`, TLS trusting `ca` (a
 * PEM file) otherwise, `serverName` the name it checks and sends as `:authority`. A bearer token rides as call metadata (`authorization`): grpc-js refuses call
 * credentials on a cleartext channel, and a gateway on an h2c listener still needs it.
 */
export function echoClient(address: string, options: { ca?: string; serverName?: string; prefix?: string } = {}): EchoClient {
  const channel = options.ca ? grpc.credentials.createSsl(readFileSync(options.ca)) : grpc.credentials.createInsecure();
  const channelOptions = options.serverName ? { 'grpc.ssl_target_name_override': options.serverName, 'grpc.default_authority': options.serverName } : {};
  const EchoClientClass = grpc.makeGenericClientConstructor(echoService(options.prefix), 'Echo');
  return new EchoClientClass(address, channel, channelOptions) as unknown as EchoClient;
}

/** Call metadata from a record (`{ authorization: 'Bearer …' }`). */
export function metadataOf(fields: Record<string, string> = {}): grpc.Metadata {
  const metadata = new grpc.Metadata();
  for (const [key, value] of Object.entries(fields)) metadata.set(key, value);
  return metadata;
}

/** A gRPC message frame (PROTOCOL-HTTP2.md "Length-Prefixed-Message", uncompressed) of `value` as JSON: a request body for raw HTTP clients. */
export function grpcFrame(value: unknown): Buffer {
  const message = Buffer.from(JSON.stringify(value));
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** The messages of a gRPC response body read by a raw HTTP client, parsed from JSON. */
export function grpcMessages(body: Buffer): unknown[] {
  const found: unknown[] = [];
  for (let offset = 0; offset + 5 <= body.length; ) {
    const length = body.readUInt32BE(offset + 1);
    found.push(JSON.parse(body.subarray(offset + 5, offset + 5 + length).toString('utf8')));
    offset += 5 + length;
  }
  return found;
}

/** Promise form of a unary call: resolves with the reply, rejects with the grpc-js ServiceError. */
export function unary<T>(client: EchoClient, name: 'Unary' | 'Fail' | 'Slow', request: unknown, options: { deadlineMs?: number; metadata?: Record<string, string> } = {}): Promise<T> {
  const metadata = metadataOf(options.metadata);
  const callOptions: grpc.CallOptions = options.deadlineMs !== undefined ? { deadline: Date.now() + options.deadlineMs } : {};
  const call = (client as unknown as Record<string, (...args: unknown[]) => unknown>)[name]!.bind(client);
  return new Promise<T>((resolve, reject) => call(request, metadata, callOptions, (error: grpc.ServiceError | null, reply: T) => (error ? reject(error) : resolve(reply))));
}

export { grpc };
