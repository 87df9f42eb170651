import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/**
 * One pass over a request's raw header list (`req.rawHeaders`: name, value, name, value, …) that
 * picks out what the pipeline decides on, so Node's lazily built `req.headers` object is never
 * needed on the hot path.
 */
export interface InboundHeaders {
  /** The raw names lowercased, one per pair: `names[i]` belongs to `rawHeaders[2 * i]`. */
  readonly names: string[];
  /** Every `Cookie` field joined with `; ` (RFC 6265 §5.4). */
  cookie: string | undefined;
  accept: string | undefined;
  /**
   * Every `Authorization` field joined with `, `: a second field (the header is no list, RFC 9110
   * §11.6.2) makes a value no credentials check accepts.
   */
  authorization: string | undefined;
  /** The first `X-Forwarded-Proto` field; believed only from a trusted peer. */
  forwardedProto: string | undefined;
  /** Every `Connection` field joined with `, ` (RFC 9110 §7.6.1). */
  connection: string | undefined;
  /** The first `Upgrade` field (RFC 9110 §7.8). */
  upgrade: string | undefined;
  /** True when the request has a body to stream (RFC 9112 §6.3: chunked, or Content-Length > 0; HTTP/2: see {@link readRequestHeaders}). */
  hasBody: boolean;
  /**
   * True when the body is chunked (a `Transfer-Encoding` field; Node refuses one beside
   * `Content-Length`), the only framing that can carry trailer fields (RFC 9112 §7.1.2).
   */
  chunked: boolean;
  /** Every `Trailer` field joined with `, `: the trailer fields the client announces (RFC 9110 §6.6.2). */
  trailer: string | undefined;
  /** Every `traceparent` field joined with `, ` (two make none: W3C Trace Context §3.2). */
  traceparent: string | undefined;
  /** Every `tracestate` field joined with `,` (W3C Trace Context §3.3.1.1). */
  tracestate: string | undefined;
  /** Every `X-Request-Id` field joined with `, ` (two make none: a space is no id character). */
  requestId: string | undefined;
}

/**
 * Reads the {@link InboundHeaders} of `req`, over HTTP/1.1 from its raw header list alone; over
 * HTTP/2 (the compatibility API's request) its body is known by its frames instead (RFC 9113
 * §8.1): a HEADERS frame that ends the stream has none, and without `Content-Length` one that does
 * not has a body of unknown length, forwarded chunked, which may end in trailer fields.
 */
export function readRequestHeaders(req: IncomingMessage): InboundHeaders {
  const inbound = readInboundHeaders(req.rawHeaders);
  if (req.httpVersionMajor === 2 && !inbound.names.includes('content-length')) {
    inbound.hasBody = (req as unknown as Http2ServerRequest).stream.endAfterHeaders === false;
    inbound.chunked = inbound.hasBody;
  }
  return inbound;
}

/** Reads the fields of {@link InboundHeaders} from `raw` (`req.rawHeaders`). */
export function readInboundHeaders(raw: readonly string[]): InboundHeaders {
  const inbound: InboundHeaders = {
    names: new Array<string>(raw.length >> 1),
    cookie: undefined,
    accept: undefined,
    authorization: undefined,
    forwardedProto: undefined,
    connection: undefined,
    upgrade: undefined,
    hasBody: false,
    chunked: false,
    trailer: undefined,
    traceparent: undefined,
    tracestate: undefined,
    requestId: undefined,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    inbound.names[i >> 1] = name;
    remember(inbound, name, raw[i + 1]!);
  }
  return inbound;
}

/** The string fields of {@link InboundHeaders}. */
type TextField = 'cookie' | 'accept' | 'authorization' | 'forwardedProto' | 'connection' | 'upgrade' | 'trailer' | 'traceparent' | 'tracestate' | 'requestId';

/**
 * How each text field is read from the lines of its header: joined with a separator (RFC 9110
 * §5.3; `Cookie` with `; `, RFC 6265 §5.4), or the first line only (null).
 */
const TEXT_FIELDS: ReadonlyMap<string, { field: TextField; separator: string | null }> = new Map([
  ['cookie', { field: 'cookie', separator: '; ' }],
  ['accept', { field: 'accept', separator: null }],
  ['authorization', { field: 'authorization', separator: ', ' }],
  ['x-forwarded-proto', { field: 'forwardedProto', separator: null }],
  ['connection', { field: 'connection', separator: ', ' }],
  ['upgrade', { field: 'upgrade', separator: null }],
  ['trailer', { field: 'trailer', separator: ', ' }],
  ['traceparent', { field: 'traceparent', separator: ', ' }],
  ['tracestate', { field: 'tracestate', separator: ',' }],
  ['x-request-id', { field: 'requestId', separator: ', ' }],
]);

function remember(inbound: InboundHeaders, name: string, value: string): void {
  const text = TEXT_FIELDS.get(name);
  if (text !== undefined) {
    const seen = inbound[text.field];
    if (seen === undefined) inbound[text.field] = value;
    else if (text.separator !== null) inbound[text.field] = `${seen}${text.separator}${value}`;
  } else if (name === 'transfer-encoding') {
    inbound.hasBody = true;
    inbound.chunked = true;
  } else if (name === 'content-length' && Number(value) > 0) {
    inbound.hasBody = true;
  }
}
