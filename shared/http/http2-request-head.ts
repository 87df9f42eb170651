import { GatewayError } from '../errors.js';

/** The first character of a pseudo-header field's name (RFC 9113 §8.3). */
const COLON = 0x3a;

/**
 * The request-head checks of request-head.ts for an HTTP/2 request (the compatibility API's
 * `rawHeaders` holds its pseudo-header fields too, `:method`, `:scheme`, `:authority`, `:path`):
 * - more than `maxFields` regular fields → 431 `Request header fields too large`; the
 *   pseudo-header fields are not counted, so a head HTTP/1.1 takes is taken over HTTP/2;
 * - more than one `Host` → 400 `Bad request`;
 * - `:authority` and a `Host` that name another host → 400 (RFC 9113 §8.3.1: such a request is
 *   malformed), compared without ASCII case, so that no two parts of a deployment can disagree on
 *   which host the request named.
 * Neither answer closes the connection: other streams go on. Connection-specific fields
 * (`Connection`, `Keep-Alive`, `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, `TE` but
 * `trailers`) and a request without `:method`, `:scheme` or `:path` never get here: nghttp2 treats
 * them as malformed (RFC 9113 §8.2.2, §8.3.1) and resets the stream (PROTOCOL_ERROR).
 * @returns the error to answer with, or undefined when the head is acceptable.
 */
export function http2HeadError(raw: readonly string[], maxFields: number): GatewayError | undefined {
  let fields = 0;
  let authority: string | undefined;
  let host: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.charCodeAt(0) === COLON) {
      if (name === ':authority') authority = raw[i + 1];
      continue;
    }
    if (++fields > maxFields) return new GatewayError('HEADER_FIELDS_TOO_LARGE');
    if (name === 'host') {
      if (host !== undefined) return new GatewayError('BAD_REQUEST');
      host = raw[i + 1];
    }
  }
  if (authority !== undefined && host !== undefined && authority.toLowerCase() !== host.toLowerCase()) return new GatewayError('BAD_REQUEST');
  return undefined;
}
