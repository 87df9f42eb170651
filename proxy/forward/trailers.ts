import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { HOP_BY_HOP } from '../headers/hop-by-hop.js';

/**
 * Trailer fields never relayed: hop-by-hop ones, and those the gateway maps or guards in the
 * header section (`Set-Cookie`, `Location`), which a trailer must not bring back unmapped, and
 * framing (`Content-Length`), which RFC 9110 §6.5.1 forbids in trailers.
 */
const NOT_RELAYED: ReadonlySet<string> = new Set([...HOP_BY_HOP, 'set-cookie', 'location', 'content-length']);

/**
 * The `Trailer` header value (RFC 9110 §6.6.2) to send the client with a target's response, or
 * undefined to send none. `Trailer` is end-to-end, but trailer fields only exist in a chunked body
 * (RFC 9112 §7.1.2), and Node refuses `Trailer` on a response it does not chunk. So it is kept
 * only when the client's response will be chunked too: the target sent no `Content-Length`, the
 * response has content (not to `HEAD`, not 204 or 304), and Node chunks for this client
 * (`useChunkedEncodingByDefault`: HTTP/1.1, or HTTP/1.0 with `TE: chunked`).
 */
export function trailerToAnnounce(res: ServerResponse, statusCode: number, headers: IncomingHttpHeaders): string | undefined {
  const announced: string | string[] | undefined = headers.trailer;
  if (announced === undefined || headers['content-length'] !== undefined) return undefined;
  if (!res.useChunkedEncodingByDefault || res.req.method === 'HEAD' || statusCode === 204 || statusCode === 304) return undefined;
  return Array.isArray(announced) ? announced.join(', ') : announced;
}

/**
 * Whether trailer fields given to `res` (`addTrailers`) reach the client of `req`: over HTTP/1.1
 * when Node chunks the body (`res.chunkedEncoding`), over HTTP/2 always (a HEADERS frame after
 * the data, RFC 9113 §8.1), with or without a `Trailer` field announcing them.
 */
export function carriesTrailers(req: IncomingMessage, res: ServerResponse): boolean {
  return res.chunkedEncoding || req.httpVersionMajor === 2;
}

/**
 * The trailer fields of a target's response to relay to the client (undici's parsed form:
 * lowercased names), without those in {@link NOT_RELAYED}; undefined when none is left. Only
 * meaningful when the client's response carries trailers ({@link carriesTrailers}).
 */
export function relayableTrailers(trailers: IncomingHttpHeaders): OutgoingHttpHeaders | undefined {
  let relayed: OutgoingHttpHeaders | undefined;
  for (const name in trailers) {
    const value = trailers[name];
    if (value !== undefined && !NOT_RELAYED.has(name)) (relayed ??= {})[name] = value;
  }
  return relayed;
}
