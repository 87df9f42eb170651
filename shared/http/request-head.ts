import type { IncomingMessage, RequestListener } from 'node:http';
import { GatewayError } from '../errors.js';
import { sendError } from './http-response.js';
import { http2HeadError } from './http2-request-head.js';

/**
 * Most header fields a client's request may carry (Apache's `LimitRequestFields` default). Node's
 * parser keeps only a server's `maxHeadersCount` fields in `req.headers` and silently drops the
 * rest, and an upstream on Node does the same to what the gateway forwards; a limit refused
 * out loud means nothing is ever dropped unseen.
 */
export const MAX_HEADER_FIELDS = 100;

/**
 * The limit of the split-mode admin process, whose clients are the proxies' hand-offs: a
 * client's {@link MAX_HEADER_FIELDS} plus what a hand-off adds besides the client's fields (`Host`
 * and `Connection` of its own, `X-Forwarded-For/Proto/Host`, the public-origin mark), so the admin
 * process never refuses a request the public listener accepted.
 */
export const HANDED_OFF_HEADER_FIELDS = MAX_HEADER_FIELDS + 6;

const CLOSE = { headers: { connection: 'close' } };

/**
 * The checks every gateway listener makes on a request's head before anything else reads it:
 * - more than `maxFields` header fields → 431 `Request header fields too large` (RFC 6585 §5).
 *   Counted in `req.rawHeaders`, which holds at least `maxHeadersCount` fields when more were
 *   sent, so the server must have `maxHeadersCount` above `maxFields` (see http-server.ts);
 * - more than one `Host` field → 400 `Bad request` (RFC 9112 §3.2: a server MUST answer 400), so
 *   no two parts of a deployment can disagree on which host a request named.
 * Both answers close the connection: what follows such a head is not worth reading. An HTTP/2
 * request has checks of its own (http2-request-head.ts).
 * @returns the error to answer with, or undefined when the head is acceptable.
 */
export function requestHeadError(req: IncomingMessage, maxFields = MAX_HEADER_FIELDS): GatewayError | undefined {
  const raw = req.rawHeaders;
  if (req.httpVersionMajor === 2) return http2HeadError(raw, maxFields);
  if (raw.length > 2 * maxFields) return new GatewayError('HEADER_FIELDS_TOO_LARGE', CLOSE);
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host' && ++hosts > 1) return new GatewayError('BAD_REQUEST', CLOSE);
  }
  return undefined;
}

/**
 * `listener` behind {@link requestHeadError}: a refused request gets the error's JSON answer
 * (interface.md §2.6) and never reaches `listener`.
 */
export function checkingRequestHead(listener: RequestListener, maxFields = MAX_HEADER_FIELDS): RequestListener {
  return (req, res) => {
    const error = requestHeadError(req, maxFields);
    if (error === undefined) listener(req, res);
    else sendError(res, error);
  };
}
