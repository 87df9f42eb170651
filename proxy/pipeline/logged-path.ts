/**
 * The longest request-target an access-log record stores, in UTF-8 bytes (before the mark). A
 * client chooses its request-target, up to Node's header limit (16 KiB): uncut, one client could
 * fill the access log's budget with a few thousand requests and push older days out.
 */
export const MAX_LOGGED_PATH_BYTES = 2048;

/** Ends a cut request-target, so that neither a reader nor a search mistakes it for the whole one. */
export const TRUNCATION_MARK = '…';

/** Below this many UTF-16 code units a string is within the limit whatever it holds (≤ 3 UTF-8 bytes each). */
const ALWAYS_FITS = Math.floor(MAX_LOGGED_PATH_BYTES / 3);

/**
 * `target` as an access-log record stores it: itself (the same string) when its UTF-8 encoding
 * fits {@link MAX_LOGGED_PATH_BYTES}, else its longest prefix that fits and ends on a character
 * boundary, followed by {@link TRUNCATION_MARK}. A boundary is between code points, outside a
 * percent-encoded octet (`%XX`, RFC 3986 §2.1), and not between the octets of one percent-encoded
 * UTF-8 character (RFC 3629 §3), so the kept part decodes as the client sent it.
 * Callers tell a cut target by `loggedPath(t) !== t`.
 */
export function loggedPath(target: string): string {
  if (target.length <= ALWAYS_FITS || Buffer.byteLength(target) <= MAX_LOGGED_PATH_BYTES) return target;
  return target.slice(0, characterBoundary(target, fittingPrefix(target))) + TRUNCATION_MARK;
}

/** Length in code units of the longest prefix of `text` of whole code points within the limit. */
function fittingPrefix(text: string): number {
  let bytes = 0;
  let end = 0;
  while (end < text.length) {
    const code = text.codePointAt(end)!;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4; // a lone surrogate encodes as U+FFFD: 3
    if (bytes + size > MAX_LOGGED_PATH_BYTES) break;
    bytes += size;
    end += code > 0xffff ? 2 : 1;
  }
  return end;
}

/** `end`, moved back out of a `%XX` triplet and out of a percent-encoded UTF-8 sequence it splits. */
function characterBoundary(text: string, end: number): number {
  if (text[end - 1] === '%') end -= 1;
  else if (text[end - 2] === '%') end -= 2;
  if (!isContinuation(octetAt(text, end))) return end;
  // The character goes on past the cut: drop its octets before it, lead included (at most 3).
  let start = end;
  for (let i = 0; i < 3 && start >= 3; i++) {
    const octet = octetAt(text, start - 3);
    if (octet < 0x80) break;
    start -= 3;
    if (!isContinuation(octet)) break;
  }
  return start;
}

/** The octet percent-encoded at `index` (`%XX`), or -1 when there is none. */
function octetAt(text: string, index: number): number {
  if (text[index] !== '%') return -1;
  const hex = text.slice(index + 1, index + 3);
  return /^[0-9A-Fa-f]{2}$/.test(hex) ? Number.parseInt(hex, 16) : -1;
}

/** A UTF-8 continuation byte: 10xxxxxx. */
function isContinuation(octet: number): boolean {
  return octet >= 0x80 && octet < 0xc0;
}
