import type { IncomingHttpHeaders } from 'node:http';
import { GATEWAY_COOKIE_NAMES } from '../../shared/http/cookies.js';
import { connectionOptions, HOP_BY_HOP } from './hop-by-hop.js';
import { joinPath, remainderUnder } from '../routing/path-mapping.js';
import type { TargetMapping } from '../pool/route-target.js';

/** A `Path` attribute inside a Set-Cookie value (RFC 6265 §5.2.4), compiled once. */
const PATH_ATTRIBUTE = /;\s*path\s*=/i;
/** What a browser reads as the slashes opening a path or a scheme-relative reference. */
const LEADING_SLASHES = /^[/\\\t]+/;

/**
 * Maps a target's response header fields to the client's (design.md §3.7), as a flat
 * `[name, value, …]` list for `res.writeHead`: hop-by-hop fields and those named in `Connection`
 * are dropped (RFC 9110 §7.6.1), `Location` pointing at the target is moved under the public
 * prefix, `Set-Cookie` is scoped to the prefix and gateway cookies are dropped.
 * `headers` is undici's parsed form: lowercased names, repeated fields as arrays.
 * `route` is the service's target that answered; without one (the admin process's answer, handed off in
 * split mode) only the hop-by-hop fields are dropped: its `Location` and `Set-Cookie`, the
 * gateway's own cookies among them, are the gateway's and reach the client as they are.
 */
export function mapResponseHeaders(headers: IncomingHttpHeaders, route?: TargetMapping): (string | string[])[] {
  const options = connectionOptions(joined(headers.connection));
  const out: (string | string[])[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || HOP_BY_HOP.has(name) || (options !== undefined && options.includes(name))) continue;
    if (name === 'x-request-id') continue; // the gateway's own goes instead (exchange.ts): one id per request, design.md §3.10
    if (route === undefined) {
      out.push(name, value);
    } else if (name === 'location') {
      out.push(name, typeof value === 'string' ? mapLocation(value, route) : value);
    } else if (name === 'set-cookie') {
      const cookies = mapSetCookies(value, route);
      if (cookies.length > 0) out.push(name, cookies);
    } else {
      out.push(name, value);
    }
  }
  return out;
}

/**
 * `Location` (RFC 9110 §10.2.2) as the client must see it. An absolute URL on the target's origin,
 * or an absolute path, that lies under the target's base path becomes the same remainder under
 * the public prefix: `http://target/base/x?q` → `/prefix/x?q`, `/base` → `/prefix`. Anything else
 * (relative references, other origins, `//host`, paths outside the base) is returned unchanged.
 * A mapped result never starts with two slashes: `http://target//evil.example/x` is a path on the
 * target, but `//evil.example/x` would send the browser to another site (see {@link oneLeadingSlash}).
 */
export function mapLocation(location: string, route: TargetMapping): string {
  let path: string;
  if (location.charCodeAt(0) === 0x2f) {
    const second = location.charCodeAt(1);
    if (second === 0x2f || second === 0x5c) return location;
    path = location;
  } else if (startsWithOrigin(location, route.origin)) {
    path = location.slice(route.origin.length);
    if (path.charCodeAt(0) !== 0x2f) path = '/' + path;
  } else {
    return location;
  }
  const rest = remainderUnder(path, route.basePath);
  return rest === undefined ? location : oneLeadingSlash(joinPath(route.prefix, rest));
}

/**
 * `path` with its leading run of `/`, `\` and tabs made one `/`. A browser reads `\` as `/` in an
 * http(s) URL and drops tabs (WHATWG URL parsing), so `/\host`, `/\t/host` and `//host` all name
 * another host (a scheme-relative reference, RFC 3986 §4.2), which a mapped `Location` must not.
 */
function oneLeadingSlash(path: string): string {
  const second = path.charCodeAt(1);
  if (second !== 0x2f && second !== 0x5c && second !== 0x09) return path;
  return path.replace(LEADING_SLASHES, '/');
}

/** Each Set-Cookie value mapped by {@link mapSetCookie}; gateway cookies left out. */
function mapSetCookies(value: string | string[], route: TargetMapping): string[] {
  const out: string[] = [];
  for (const cookie of typeof value === 'string' ? [value] : value) {
    const mapped = mapSetCookie(cookie, route);
    if (mapped !== undefined) out.push(mapped);
  }
  return out;
}

/**
 * One `Set-Cookie` value (RFC 6265 §4.1) as the client must see it, or undefined when it names a
 * gateway cookie, which no upstream may set. A `Path` under the target's base path moves to the
 * same place under the public prefix (`Path=/` with no base → `Path=/prefix`); any other `Path`
 * is pinned to the prefix, so a service cannot scope cookies to the rest of the gateway. A cookie
 * without a `Path` gets `Path=/prefix`: the browser's default path is the request path up to its
 * last `/` (RFC 6265 §5.1.4), which for `/prefix` or `/prefix/x` is `/`, every service's. The
 * root service's cookies are left as they are.
 */
export function mapSetCookie(cookie: string, route: TargetMapping): string | undefined {
  if (GATEWAY_COOKIE_NAMES.has(cookieName(cookie))) return undefined;
  if (!PATH_ATTRIBUTE.test(cookie)) return route.prefix === '' ? cookie : `${cookie}; Path=${route.prefix}`;
  const parts = cookie.split(';');
  for (let i = 1; i < parts.length; i++) {
    const part = parts[i]!;
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim().toLowerCase() !== 'path') continue;
    parts[i] = ` Path=${mapCookiePath(part.slice(eq + 1).trim(), route)}`;
  }
  return parts.join(';');
}

function mapCookiePath(path: string, route: TargetMapping): string {
  const rest = path.charCodeAt(0) === 0x2f ? remainderUnder(path, route.basePath) : undefined;
  if (rest === undefined || rest === '' || rest === '/') return route.prefix || '/';
  return route.prefix + rest;
}

/** The cookie-name of a Set-Cookie value: up to the first `=` (or `;`), trimmed. */
function cookieName(cookie: string): string {
  const eq = cookie.indexOf('=');
  const semicolon = cookie.indexOf(';');
  const end = eq === -1 || (semicolon !== -1 && semicolon < eq) ? semicolon : eq;
  return (end === -1 ? cookie : cookie.slice(0, end)).trim();
}

/** ASCII case-insensitive `text.startsWith(origin)` (scheme and host are case-insensitive), at a path boundary. */
function startsWithOrigin(text: string, origin: string): boolean {
  if (text.length < origin.length) return false;
  if (text.length > origin.length) {
    const next = text.charCodeAt(origin.length);
    if (next !== 0x2f && next !== 0x3f && next !== 0x23) return false;
  }
  return text.slice(0, origin.length).toLowerCase() === origin;
}

function joined(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
