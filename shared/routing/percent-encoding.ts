/** Reading percent-encoded octets (RFC 3986 §2.1) in a raw request path, without allocating. */

/**
 * The octet encoded by the two hex digits at `path[at]` and `path[at + 1]` (either case), or -1
 * when they are not two hex digits (or the path ends first). `decodeByte('%2F', 1)` → 0x2f.
 */
export function decodeByte(path: string, at: number): number {
  const high = hexValue(path.charCodeAt(at));
  const low = hexValue(path.charCodeAt(at + 1));
  return high < 0 || low < 0 ? -1 : (high << 4) | low;
}

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}
