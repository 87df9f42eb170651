/**
 * Hop-by-hop header fields (RFC 9110 §7.6.1): they describe one connection, so a proxy removes
 * them, and every field the `Connection` header names, before forwarding a message in either
 * direction. `Proxy-Connection` is the non-standard predecessor of `Connection`; `Proxy-Authorization`
 * and `Proxy-Authenticate` (RFC 9110 §11.7) are consumed by the proxy they address. `Trailer` is
 * end-to-end (RFC 9110 §6.6.2) but announces fields of a chunked body, and each hop frames its
 * body itself: it is removed here and sent again only where the trailer fields go along
 * (trailers.ts for responses, trailer-dispatch.ts for requests). `HTTP2-Settings` belongs to the
 * connection it asked to upgrade (RFC 7540 §3.2.1). Together these are HTTP/2's connection-specific
 * fields too (RFC 9113 §8.2.2), which node:http2 refuses to send: an HTTP/2 client's response
 * never carries one.
 */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'http2-settings',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

/** The everyday `Connection` values, which name no other field. */
const PLAIN_CONNECTION = /^\s*(?:keep-alive|close)\s*$/i;

/**
 * The field names a `Connection` header value lists (RFC 9110 §7.6.1), lowercased, with `_` read
 * as `-` like every other header name the proxy compares; undefined when it names nothing besides
 * the hop-by-hop fields already removed (the common `keep-alive` / `close`).
 */
export function connectionOptions(value: string | undefined): string[] | undefined {
  if (value === undefined || PLAIN_CONNECTION.test(value)) return undefined;
  let options: string[] | undefined;
  for (const token of value.split(',')) {
    const name = comparableName(token.trim().toLowerCase());
    if (name === '' || name === 'close' || HOP_BY_HOP.has(name)) continue;
    (options ??= []).push(name);
  }
  return options;
}

/**
 * A lowercased header name as the proxy compares it: `_` read as `-`, because many upstream
 * stacks (CGI, WSGI, Rack, PHP) fold both into the same variable, so `X_Forwarded_User` would
 * otherwise pass for `X-Forwarded-User`.
 */
export function comparableName(lowercased: string): string {
  return lowercased.includes('_') ? lowercased.replaceAll('_', '-') : lowercased;
}
