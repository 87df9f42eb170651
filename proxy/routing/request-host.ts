/**
 * The host a request names (design.md §3.2 "routing by host"), read only while some service has
 * `hosts`: the `Host` field (RFC 9112 §3.2; one at most, request-head.ts refuses two) as a name
 * that can be compared with a service's registered ones (shared/types.ts `Service.hosts`:
 * lower-case A-labels, no port, no trailing dot).
 *
 * An absolute-form request-target never gets this far (canonical-path.ts refuses anything but
 * origin-form with 400), so a `Host` can never disagree with a target's authority.
 */

/** At most this many characters in a DNS name, its trailing dot left out (RFC 1035 §2.3.4). */
const MAX_NAME_LENGTH = 253;
/** At most this many characters in one label (RFC 1035 §2.3.4). */
const MAX_LABEL_LENGTH = 63;

const DOT = 0x2e;
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
 * ASCII letters lowercased, a port dropped, one trailing dot dropped (`App.Example.COM.:8080` →
 * `app.example.com`). Undefined when it names no possible service host: absent, an IP literal in
 * brackets (IPv6, RFC 3986 §3.2.2), a port that is not digits, an empty label, a character other
 * than letters, digits, `-` and `_`, or a name or label over DNS's lengths. Such a request is
 * routed as one to a host no service names.
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
  const name = (end === value.length ? value : value.slice(0, end)).toLowerCase();
  return isHostName(name) ? name : undefined;
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
 * True for a lowercased dotted name of labels of `a-z 0-9 - _`, each 1–63 characters, at most
 * 253 in all: what a registered host (or a label matched by its `*.` wildcard) can be.
 */
function isHostName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_NAME_LENGTH) return false;
  let label = 0;
  for (let i = 0; i < name.length; i++) {
    const code = name.charCodeAt(i);
    if (code === DOT) {
      if (label === 0) return false;
      label = 0;
    } else if (isLabelCharacter(code) && ++label <= MAX_LABEL_LENGTH) {
      continue;
    } else {
      return false;
    }
  }
  return label > 0;
}

/** `a-z`, `0-9`, `-`, `_` (lowercase only: the name was lowercased first). */
function isLabelCharacter(code: number): boolean {
  return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || code === 0x2d || code === 0x5f;
}
