/**
 * Step 1 of the data plane (design.md §3.1): refuses a request-target that no safe routing or
 * forwarding can be derived from. Routing then compares a routing key of the path (routing-key.ts)
 * and forwards the raw remainder after the matched prefix, so a raw path that an upstream could
 * decode into something climbing out of its base path is refused here instead: a `.` or `..`
 * segment once percent-decoded (segments split on `/` and `\`, RFC 3986 §5.2.4 dot segments),
 * NUL, malformed percent-encoding, or a request-target that is not in origin-form
 * (RFC 9112 §3.2.1), a raw `#` included.
 */

import { decodeByte } from './percent-encoding.js';

/** Characters that can make a path unsafe; without any of them the path is accepted at once. */
const NEEDS_SCAN = /[%.\\\0]/;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const PERCENT = 0x25;
const SEMICOLON = 0x3b;
const HASH = '#';

/** Length of the path part of a request-target: up to the first `?`, or the whole of it. */
export function pathLength(target: string): number {
  const query = target.indexOf('?');
  return query === -1 ? target.length : query;
}

/**
 * True when `target` (the raw `req.url`) is origin-form and its path, `target[0, pathEnd)`, is safe
 * to route and forward. Origin-form is `absolute-path [ "?" query ]` (RFC 9112 §3.2.1): a raw `#`
 * anywhere is refused, because upstreams disagree on it (WHATWG URL parsers cut the path there,
 * others keep it), so the gateway could not know which path the upstream serves. Otherwise the
 * query is not inspected. Encoded slashes (`%2F`) are allowed; they only count as separators for
 * the dot-segment check. A segment that is `.`/`..` before a `;` (`..;x`) counts as a dot segment
 * too, because some servlet containers strip path parameters before resolving dot segments.
 */
export function isCanonicalPath(target: string, pathEnd: number): boolean {
  if (target.charCodeAt(0) !== SLASH || target.includes(HASH)) return false;
  const path = pathEnd === target.length ? target : target.slice(0, pathEnd);
  return !NEEDS_SCAN.test(path) || scanDecoded(path);
}

/**
 * Walks `path` decoding `%XX` on the fly, without allocating. Per segment it tracks how many
 * decoded dots it holds and whether anything else came before a `;`.
 */
function scanDecoded(path: string): boolean {
  let dots = 0;
  let other = false;
  let parameters = false;
  for (let i = 0; i < path.length; i++) {
    let byte = path.charCodeAt(i);
    if (byte === PERCENT) {
      byte = decodeByte(path, i + 1);
      if (byte < 0) return false;
      i += 2;
    }
    if (byte === 0) return false;
    if (byte === SLASH || byte === BACKSLASH) {
      if (isDotSegment(dots, other)) return false;
      dots = 0;
      other = false;
      parameters = false;
    } else if (parameters) {
      continue;
    } else if (byte === DOT) {
      dots++;
    } else if (byte === SEMICOLON) {
      parameters = true;
    } else {
      other = true;
    }
  }
  return !isDotSegment(dots, other);
}

function isDotSegment(dots: number, other: boolean): boolean {
  return !other && (dots === 1 || dots === 2);
}
