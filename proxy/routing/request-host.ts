/**
 * The host a request names (design.md §3.2 "routing by host"), read only while some service has
 * `hosts`: the `Host` field (RFC 9112 §3.2; one at most, request-head.ts refuses two) as a name
 * that can be compared with a service's registered ones (shared/types.ts `Service.hosts`:
 * lower-case A-labels, no port, no trailing dot).
 *
 * An absolute-form request-target never gets this far (canonical-path.ts refuses anything but
 * origin-form with 400), so a `Host` can never disagree with a target's authority.
 */

import { normalizeHost } from '../../shared/services/host-names.js';

const OPEN_BRACKET = 0x5b;

/**
 * The value of the first `Host` field in `raw` (`req.rawHeaders`: name, value, …), or undefined
 * when there is none (an HTTP/1.0 request may send none).
 */
export function hostField(raw: readonly string[]): string | undefined {
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') return raw[i + 1];
  }
  return undefined;
}

/**
 * The name a `Host` value (RFC 9110 §7.2: `uri-host [ ":" port ]`) can match a service host by:
 * its port dropped, then the registry's own normal form (shared/services/host-names.ts
 * `normalizeHost`: lower case, one trailing dot dropped, A-labels), so `App.Example.COM.:8080`
 * is `app.example.com`. Undefined when it names no possible service host: absent, an IP literal
 * (in brackets or not), a port that is not digits, or a malformed name. Such a request is routed
 * as one to a host no service names.
 */
export function requestHostName(value: string | undefined): string | undefined {
  if (value === undefined || value.length === 0 || value.charCodeAt(0) === OPEN_BRACKET) return undefined;
  const colon = value.lastIndexOf(':');
  if (colon === -1) return normalizeHost(value);
  return isDigits(value, colon + 1) ? normalizeHost(value.slice(0, colon)) : undefined;
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
