/**
 * The routing key (design.md §5 "routing key", §3.1–3.2): the form of a request path that the route
 * table and the gateway-path check compare, so that a request goes to the most protective service
 * that any common upstream reading of its path could reach. Upstreams disagree on paths: Python's
 * http.server percent-decodes and collapses `//`, WHATWG URL parsers (Node's `new URL`) read `\` as
 * `/`, Express routes case-insensitively, servlet containers strip `;` path parameters before
 * routing. The key takes every one of those readings at once:
 *
 * - percent-encoded unreserved characters (`ALPHA DIGIT - . _ ~`, RFC 3986 §2.3) are decoded:
 *   `/%73ecret` → `/secret`; other escapes stay encoded, in lowercase hex;
 * - `/`, `\`, `%2F` and `%5C` (either hex case) all separate segments;
 * - empty segments collapse: `//a///b` → `/a/b`;
 * - ASCII letters are lowercased: `/SECRET` → `/secret`;
 * - a raw `;` starts path parameters (RFC 3986 §3.3), ignored up to the segment's end:
 *   `/secret;jsessionid=1/x` → `/secret/x`.
 *
 * A trailing separator is kept as one `/` (`/app/` → `/app/`), and the key of a path with no
 * segments is `/`. The path must already have passed `isCanonicalPath` (no malformed escapes, dot
 * segments, NUL or `#`). The forwarded path is not the key: it is the raw remainder after the raw
 * spelling of the matched prefix ({@link remainderAfter}).
 */

import { decodeByte } from './percent-encoding.js';

/** A path with none of these is its own key: nothing to decode, split, collapse, strip or fold. */
const NEEDS_KEY = /[%\\;A-Z]|\/\//;

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const PERCENT = 0x25;
const SEMICOLON = 0x3b;

/**
 * The routing key of a raw request path (starts with `/`, no query). Allocation-free for a path
 * that needs no key of its own (no `%`, `\`, `//`, `;` or uppercase ASCII letter): it is returned
 * as it is, so `routingKey(path) === path` tells the fast path apart.
 */
export function routingKey(path: string): string {
  if (!NEEDS_KEY.test(path)) return path;
  let key = '';
  let trailing = false;
  let at = 0;
  while (at < path.length) {
    const separator = separatorLength(path, at);
    if (separator > 0) {
      at += separator;
      trailing = true;
      continue;
    }
    const end = segmentEnd(path, at);
    const segment = segmentKey(path, at, end);
    if (segment !== '') {
      key += '/' + segment;
      trailing = false;
    }
    at = end;
  }
  if (key === '') return '/';
  return trailing ? key + '/' : key;
}

/**
 * The raw remainder of `path` after its first `segments` key segments (the matched prefix's
 * depth: 0 for the root service, 2 for `/a/b`), as it is forwarded: the bytes after the raw
 * spelling of those segments (their `;` parameters included), except that the run of separators
 * at the boundary (`//`, `%2F`, `\`, mixed) becomes a single `/`. So an upstream never reads the
 * remainder as starting under another segment (`//host/x` would be a host to a WHATWG parser)
 * while an encoded slash further on reaches it untouched. Returns `''` when nothing follows the
 * prefix, `/` when only separators do.
 *
 * `remainderAfter('/py/secret%2Fx', 2)` → `/x`; `remainderAfter('/Rabbit/api/%2F/q', 1)` →
 * `/api/%2F/q`; `remainderAfter('/a;p=1', 1)` → `''`.
 */
export function remainderAfter(path: string, segments: number): string {
  let at = 0;
  let left = segments;
  while (left > 0 && at < path.length) {
    const separator = separatorLength(path, at);
    if (separator > 0) {
      at += separator;
      continue;
    }
    // A segment that starts with `;` is all parameters: empty in the key, so it does not count.
    if (path.charCodeAt(at) !== SEMICOLON) left--;
    at = segmentEnd(path, at);
  }
  let rest = at;
  for (let separator = separatorLength(path, rest); separator > 0; separator = separatorLength(path, rest)) {
    rest += separator;
  }
  if (rest === at) return path.slice(at);
  return rest === path.length ? '/' : '/' + path.slice(rest);
}

/** 1 for `/` or `\`, 3 for `%2F` or `%5C` (either case) at `path[at]`; 0 for anything else. */
function separatorLength(path: string, at: number): number {
  const code = path.charCodeAt(at);
  if (code === SLASH || code === BACKSLASH) return 1;
  if (code !== PERCENT) return 0;
  const byte = decodeByte(path, at + 1);
  return byte === SLASH || byte === BACKSLASH ? 3 : 0;
}

/** Where the segment starting at `path[start]` ends: at the next separator, or the path's end. */
function segmentEnd(path: string, start: number): number {
  let at = start;
  while (at < path.length && separatorLength(path, at) === 0) at++;
  return at;
}

/** The key of the segment `path[start, end)`: up to its first `;`, decoded and lowercased. */
function segmentKey(path: string, start: number, end: number): string {
  let key = '';
  for (let at = start; at < end; at++) {
    const code = path.charCodeAt(at);
    if (code === SEMICOLON) break;
    const byte = code === PERCENT ? decodeByte(path, at + 1) : -1;
    if (byte < 0) {
      key += String.fromCharCode(lowercase(code));
    } else {
      key += isUnreserved(byte) ? String.fromCharCode(lowercase(byte)) : path.slice(at, at + 3).toLowerCase();
      at += 2;
    }
  }
  return key;
}

/** ASCII `A-Z` to `a-z`; every other code unit unchanged. */
function lowercase(code: number): number {
  return code >= 0x41 && code <= 0x5a ? code | 0x20 : code;
}

/** `ALPHA / DIGIT / "-" / "." / "_" / "~"` (RFC 3986 §2.3). */
function isUnreserved(byte: number): boolean {
  const letter = byte | 0x20;
  return (
    (letter >= 0x61 && letter <= 0x7a) ||
    (byte >= 0x30 && byte <= 0x39) ||
    byte === 0x2d ||
    byte === 0x2e ||
    byte === 0x5f ||
    byte === 0x7e
  );
}
