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
  /** Every `X-Forwarded-For` field joined with `, `; believed only from a trusted peer. */
  forwardedFor: string | undefined;
  /** The first `X-Forwarded-Proto` field; believed only from a trusted peer. */
  forwardedProto: string | undefined;
  /** Every `Connection` field joined with `, ` (RFC 9110 §7.6.1). */
  connection: string | undefined;
  /** The first `Upgrade` field (RFC 9110 §7.8). */
  upgrade: string | undefined;
  /** True when the request has a body to stream (RFC 9112 §6.3: chunked, or Content-Length > 0). */
  hasBody: boolean;
  /**
   * True when the body is chunked (a `Transfer-Encoding` field; Node refuses one beside
   * `Content-Length`), the only framing that can carry trailer fields (RFC 9112 §7.1.2).
   */
  chunked: boolean;
  /** Every `Trailer` field joined with `, `: the trailer fields the client announces (RFC 9110 §6.6.2). */
  trailer: string | undefined;
}

/** Reads the fields of {@link InboundHeaders} from `raw` (`req.rawHeaders`). */
export function readInboundHeaders(raw: readonly string[]): InboundHeaders {
  const inbound: InboundHeaders = {
    names: new Array<string>(raw.length >> 1),
    cookie: undefined,
    accept: undefined,
    authorization: undefined,
    forwardedFor: undefined,
    forwardedProto: undefined,
    connection: undefined,
    upgrade: undefined,
    hasBody: false,
    chunked: false,
    trailer: undefined,
  };
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    inbound.names[i >> 1] = name;
    remember(inbound, name, raw[i + 1]!);
  }
  return inbound;
}

function remember(inbound: InboundHeaders, name: string, value: string): void {
  switch (name) {
    case 'cookie':
      inbound.cookie = joined(inbound.cookie, value, '; ');
      break;
    case 'accept':
      inbound.accept ??= value;
      break;
    case 'authorization':
      inbound.authorization = joined(inbound.authorization, value, ', ');
      break;
    case 'x-forwarded-for':
      inbound.forwardedFor = joined(inbound.forwardedFor, value, ', ');
      break;
    case 'x-forwarded-proto':
      inbound.forwardedProto ??= value;
      break;
    case 'connection':
      inbound.connection = joined(inbound.connection, value, ', ');
      break;
    case 'upgrade':
      inbound.upgrade ??= value;
      break;
    case 'transfer-encoding':
      inbound.hasBody = true;
      inbound.chunked = true;
      break;
    case 'trailer':
      inbound.trailer = joined(inbound.trailer, value, ', ');
      break;
    case 'content-length':
      if (Number(value) > 0) inbound.hasBody = true;
      break;
  }
}

/** `value` after the fields of that name seen before, if any, with `separator` between. */
function joined(seen: string | undefined, value: string, separator: string): string {
  return seen === undefined ? value : `${seen}${separator}${value}`;
}
