import { normalizeHost } from '../../shared/services/host-names.js';
import { MAX_RETURN_ADDRESS_LENGTH } from '../../shared/http/return-to.js';

/** Characters URL parsers strip or read as a separator (WHATWG URL reads `\` as `/`): never in a return address. */
const UNSAFE = /[\u0000-\u0020\u007f\\]/;

/** Where a sign-in's `rd` sends the browser back to (design.md §4.16). */
export type ReturnAddress =
  /** On PUBLIC_URL's origin: the path and query, as `returnTo` has them. */
  | { kind: 'public'; returnTo: string }
  /** On ADMIN_URL's origin: the whole address (re-serialised). */
  | { kind: 'admin'; url: string }
  /** On a service host: the host (normal form) and the path and query on it. */
  | { kind: 'host'; host: string; returnTo: string };

/** The origins a return address may name, and how to tell a registered service host. */
export interface ReturnAddressRules {
  publicUrl: URL;
  adminUrl: URL | undefined;
  /** Whether a service lists `name` (normal form) in its `hosts`, exactly or by a wildcard. */
  isServiceHost: (name: string) => boolean;
}

/**
 * Reads a sign-in's return address `rd`: an absolute URL on PUBLIC_URL's origin, ADMIN_URL's, or a
 * registered service host's on PUBLIC_URL's scheme and port (the one listener serves them all).
 * It is judged as browsers will read it, WHATWG URL, and what is sent back is that reading
 * re-serialised, never the raw text: so `http://APP.example.com` is `app.example.com`, an IDN
 * homograph is its own A-label (registered or not), and userinfo (`https://app@evil`), a
 * backslash, whitespace or a control character, a scheme-relative `//evil` or another scheme or
 * port is refused. A wildcard service host stands for one label more, never its parent nor two.
 * @returns the address, or undefined when refused.
 */
export function readReturnAddress(rd: string, rules: ReturnAddressRules): ReturnAddress | undefined {
  if (rd.length > MAX_RETURN_ADDRESS_LENGTH || UNSAFE.test(rd) || !URL.canParse(rd)) return undefined;
  const url = new URL(rd);
  if (url.username !== '' || url.password !== '') return undefined;
  const returnTo = url.pathname + url.search;
  if (sameOrigin(url, rules.publicUrl)) return { kind: 'public', returnTo };
  if (rules.adminUrl !== undefined && sameOrigin(url, rules.adminUrl)) return { kind: 'admin', url: url.href };
  if (url.protocol !== rules.publicUrl.protocol || url.port !== rules.publicUrl.port) return undefined;
  const host = normalizeHost(url.hostname);
  return host !== undefined && host === url.hostname && rules.isServiceHost(host) ? { kind: 'host', host, returnTo } : undefined;
}

function sameOrigin(url: URL, origin: URL): boolean {
  return url.protocol === origin.protocol && url.host === origin.host;
}
