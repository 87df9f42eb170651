import { buildConnector } from 'undici';

/**
 * Targets spoken to over HTTP/2 (design.md §4.13): an `h2c://host:port` target in cleartext with
 * prior knowledge (RFC 9113 §3.3), an `https://` one by ALPN (RFC 9113 §3.2). undici connects to
 * either through a connector made here; an `h2c://` origin is dialled as `http://`.
 */

/** The scheme of a target spoken to in cleartext HTTP/2 with prior knowledge. */
const H2C_SCHEME = 'h2c:';

/** Whether `origin` (or a url) names a cleartext HTTP/2 target. */
export function isH2cOrigin(origin: string): boolean {
  return origin.startsWith(H2C_SCHEME);
}

/** `origin` as undici dials it: `h2c://host:port` as `http://host:port`, any other unchanged. */
export function dialledOrigin(origin: string): string {
  return isH2cOrigin(origin) ? `http:${origin.slice(H2C_SCHEME.length)}` : origin;
}

/**
 * An undici connector offering HTTP/2: with `cleartext`, prior knowledge on a plain socket; else
 * ALPN `h2` then `http/1.1` over TLS. `timeoutMs`: the longest connect (undici's default without).
 */
export function http2Connector(cleartext: boolean, timeoutMs?: number): buildConnector.connector {
  // undici 7 reads `useH2c` (its H2CClient's option) but its types do not name it.
  const options: buildConnector.BuildOptions & { useH2c: boolean } = { allowH2: true, useH2c: cleartext, ...(timeoutMs !== undefined ? { timeout: timeoutMs } : {}) };
  return buildConnector(options);
}
