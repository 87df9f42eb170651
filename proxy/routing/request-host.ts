/**
 * The host a request names (design.md §3.2 "routing by host"), read only while some service has
 * `hosts`: the `Host` field (RFC 9112 §3.2; one at most, request-head.ts refuses two) as a name
 * that can be compared with a service's registered ones (shared/types.ts `Service.hosts`:
 * lower-case A-labels, no port, no trailing dot).
 *
 * An absolute-form request-target never gets this far (canonical-path.ts refuses anything but
 * origin-form with 400), so a `Host` can never disagree with a target's authority; over HTTP/2,
 * `:authority` is the `Host` (RFC 9113 §8.3.1).
 */

const OPEN_BRACKET = 0x5b;
/** HTTP/2's pseudo-header field naming the target's authority; node:http2 hands its names lowercased. */
const AUTHORITY = ':authority';
const DOT = 0x2e;
const UPPERCASE = /[A-Z]/;
const UPPERCASE_RUNS = /[A-Z]+/g;

/**
 * The value of the first `Host` field in `raw` (`req.rawHeaders`: name, value, …), or of HTTP/2's
 * `:authority` (RFC 9113 §8.3.1, which comes first and which a `Host` may not contradict:
 * http2-request-head.ts), or undefined when there is none (an HTTP/1.0 request may send none).
 */
export function hostField(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if ((name.length === 4 && name.toLowerCase() === 'host') || name === AUTHORITY) return raw[i + 1];
  }
  return undefined;
}

/**
 * The name a `Host` value (RFC 9110 §7.2: `uri-host [ ":" port ]`) is looked up by: its port
 * dropped, one trailing dot dropped, ASCII letters lowercased (`App.Example.COM.:8080` →
 * `app.example.com`). Undefined when it is absent, empty, an IP literal in brackets (IPv6,
 * RFC 3986 §3.2.2) or has a port that is not digits. Nothing else is checked here: a name is a
 * service host only when it equals a registered one, which the registry keeps in its normal
 * form (shared/services/host-names.ts), or is one valid label under a registered wildcard
 * (host-routes.ts checks that label); anything else (a raw non-ASCII name included: Node reads
 * field values as latin1, and browsers send A-labels) matches none and is routed as on a host no
 * service names. So a request pays no IDNA or full-name validation on the hot path.
 */
export function requestHostName(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0 || value.charCodeAt(0) === OPEN_BRACKET) return undefined;
  let end = value.length;
  const colon = value.lastIndexOf(':');
  if (colon !== -1) {
    if (!isDigits(value, colon + 1)) return undefined;
    end = colon;
  }
  if (end > 0 && value.charCodeAt(end - 1) === DOT) end--;
  if (end === 0) return undefined;
  const name = end === value.length ? value : value.slice(0, end);
  // ASCII letters only: no other letter may fold into a registered name (`\u212A` is a `K` to toLowerCase).
  return UPPERCASE.test(name) ? name.replace(UPPERCASE_RUNS, (run) => run.toLowerCase()) : name;
}

/** True when `text[from…]` is one or more ASCII digits (a port, RFC 3986 §3.2.3; empty is allowed there, not here). */
function isDigits(text: string, from: number): boolean {
  if (from >= text.length) return false;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x30 || code > 0x39) return false;
  }
  return true;
}

/**
 * The names ({@link requestHostName}) of PUBLIC_URL's and ADMIN_URL's hosts, on which the gateway's paths
 * win as before hosts existed (an IP literal in brackets is no service host, so none is needed).
 */
export function gatewayHostsOf(publicUrl: URL, adminUrl: URL | undefined): ReadonlySet<string> {
  const names = new Set<string>();
  for (const url of [publicUrl, adminUrl]) {
    const name = url && requestHostName(url.hostname);
    if (name !== undefined) names.add(name);
  }
  return names;
}
