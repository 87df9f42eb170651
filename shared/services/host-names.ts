import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * Host names as services name them and requests carry them (design.md §5): one
 * normalization for the registry (which stores what it gives) and the data plane (which looks a
 * request's host up by it), so the two can never disagree on which spelling is which host.
 * The normal form: lower case, IDNA U-labels converted to A-labels (UTS #46 as WHATWG URL does,
 * node:url `domainToASCII`), no trailing dot, labels of a-z 0-9 and `-` per RFC 1123 §2.1 (1–63
 * characters, no `-` at either end), at most 253 characters; never an IP address, never a port.
 */

/** Longest host name in its A-label form, without the trailing dot, in characters (RFC 1035 §2.3.4). */
export const MAX_HOST_NAME_LENGTH = 253;
/** Longest label, in characters (RFC 1035 §2.3.4). */
export const MAX_LABEL_LENGTH = 63;
/** The first label of a wildcard name, which stands for exactly one label. */
export const WILDCARD_PREFIX = '*.';

/** A name read: the normal form, or why it is no host name (a phrase for a field's reason). */
export type HostNameReading = { name: string; problem?: undefined } | { name?: undefined; problem: string };

const WILDCARD_TOO_WIDE = 'must name at least two labels after *. (*.example.com, not * or *.com)';
const LABEL = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
/** An ASCII character a name may not hold: refused as written, never mapped by IDNA (`%41`, `_`). */
const FORBIDDEN_ASCII = /[\x00-\x2c/:-\x60{-\x7f]/;
const ASCII_NAME = /^[\x00-\x7f]*$/;
/** A last label that URL parsers read as an IPv4 number (WHATWG URL "ends in a number"). */
const NUMERIC_LABEL = /^(\d+|0x[0-9a-f]*)$/;

/**
 * A host name as a service lists it (with `wildcard`, `*.example.com` too) or as a request names
 * it (without: a port is the caller's to remove first), in its normal form (see the module).
 * A wildcard stands above at least two labels (`*.com` is refused; `*.co.uk` cannot be told from
 * `*.example.com` without a public-suffix list, so it is allowed).
 * @returns `{ name }`, or `{ problem }` (`must not carry a port`, …) when it is no host name.
 */
export function readHostName(text: string, options: { wildcard: boolean }): HostNameReading {
  const lower = text.toLowerCase();
  if (lower === '') return { problem: 'must not be empty' };
  if (lower.startsWith('[') || isIP(lower) === 6) return { problem: 'must not be an IP address' };
  if (lower.includes(':')) return { problem: 'must not carry a port' };
  const bare = lower.endsWith('.') ? lower.slice(0, -1) : lower;
  const wildcard = options.wildcard && bare.startsWith(WILDCARD_PREFIX);
  const domain = wildcard ? bare.slice(WILDCARD_PREFIX.length) : bare;
  if (options.wildcard && bare === '*') return { problem: WILDCARD_TOO_WIDE };
  if (domain.includes('*')) return { problem: options.wildcard ? 'may hold * only as its whole first label (*.example.com)' : 'must not hold *' };
  const ascii = toAscii(domain);
  if (ascii.problem !== undefined) return ascii;
  const problem = domainProblem(ascii.name);
  if (problem !== undefined) return { problem };
  if (wildcard && !ascii.name.includes('.')) return { problem: WILDCARD_TOO_WIDE };
  const name = wildcard ? WILDCARD_PREFIX + ascii.name : ascii.name;
  return name.length > MAX_HOST_NAME_LENGTH ? { problem: `must be at most ${MAX_HOST_NAME_LENGTH} characters` } : { name };
}

/**
 * A request's host (the `Host` header or the target's authority, without its port) in the normal
 * form, or undefined when it is no host name a service could list (an IP address, a malformed
 * name): such a request is routed as on a host no service names. No wildcard.
 */
export function normalizeHost(host: string): string | undefined {
  return readHostName(host, { wildcard: false }).name;
}

/** True when `name` (a normal form) is a wildcard, `*.example.com`. */
export const isWildcardHost = (name: string): boolean => name.startsWith(WILDCARD_PREFIX);

/** Whether a request's `host` (normal form) is the listed `name`, or one label under a wildcard `name`. */
export function hostMatches(name: string, host: string): boolean {
  if (!isWildcardHost(name)) return name === host;
  const dot = host.indexOf('.');
  return dot > 0 && host.slice(dot + 1) === name.slice(WILDCARD_PREFIX.length);
}

/**
 * `domain` (lower case, no trailing dot, no `*`) in A-labels. ASCII names are checked as they are,
 * so nothing WHATWG's host parser would rewrite (`%41`, `0x7f.1`) is taken for another name;
 * IDNA runs on names with U-labels or A-labels (`xn--`), which it validates.
 */
function toAscii(domain: string): HostNameReading {
  if (FORBIDDEN_ASCII.test(domain)) return { problem: 'labels may only contain a-z, 0-9 and -, not at their start or end' };
  if (ASCII_NAME.test(domain) && !domain.split('.').some((label) => label.startsWith('xn--'))) return { name: domain };
  const name = domainToASCII(domain);
  return name === '' ? { problem: 'is not a valid internationalized domain name' } : { name };
}

/** Why `domain` (ASCII) breaks RFC 1123's rules or is an IP address, or undefined. */
function domainProblem(domain: string): string | undefined {
  const labels = domain.split('.');
  if (labels.some((label) => label === '')) return 'must not contain an empty label';
  if (isIP(domain) !== 0 || NUMERIC_LABEL.test(labels[labels.length - 1]!)) return 'must not be an IP address';
  if (labels.some((label) => label.length > MAX_LABEL_LENGTH)) return `labels must be at most ${MAX_LABEL_LENGTH} characters`;
  if (!labels.every((label) => LABEL.test(label))) return 'labels may only contain a-z, 0-9 and -, not at their start or end';
  return undefined;
}

/**
 * The origin a service host is reached on (design.md §4.16): PUBLIC_URL's scheme and port (the one
 * listener serves every host) with `host` (normal form), e.g. `https://app.example.com:8443`.
 */
export function serviceHostOrigin(publicUrl: URL, host: string): string {
  return `${publicUrl.protocol}//${host}${publicUrl.port === '' ? '' : `:${publicUrl.port}`}`;
}
